/**
 * The built-in Python driver: one long-lived interpreter per context. Cells arrive as JSON lines
 * on fd 3 (code, end marker, variables for that cell only); replies (results, errors, done) go
 * out as JSON lines on fd 4; the cell's own stdout and stderr stay on fds 1 and 2, each closed
 * off by the end marker the driver is given.
 */
export const pythonDriver = String.raw`
import ast, base64, io, json, os, sys, traceback

control_in = os.fdopen(3, "r")
control_out = os.fdopen(4, "w")
sys.stdin = open(os.devnull)
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
count = 0

def send(message):
    control_out.write(json.dumps(message) + "\n")
    control_out.flush()

def bundle(value):
    data = {"text/plain": repr(value)}
    for method, mime in (("_repr_html_", "text/html"), ("_repr_markdown_", "text/markdown"), ("_repr_json_", "application/json"), ("_repr_png_", "image/png")):
        render = getattr(value, method, None)
        if callable(render):
            try:
                rendered = render()
            except Exception:
                continue
            if rendered is None:
                continue
            if isinstance(rendered, bytes):
                rendered = base64.b64encode(rendered).decode()
            data[mime] = rendered
    if isinstance(value, (dict, list)) and "application/json" not in data:
        try:
            json.dumps(value)
            data["application/json"] = value
        except (TypeError, ValueError):
            pass
    return data

def figures():
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        buffer = io.BytesIO()
        pyplot.figure(number).savefig(buffer, format="png", bbox_inches="tight")
        send({"type": "result", "main": False, "results": {"image/png": base64.b64encode(buffer.getvalue()).decode(), "text/plain": "<Figure>"}})
    pyplot.close("all")

def set_env(values):
    """Sets variables for one cell; answers what to restore afterwards (None: unset)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    return saved

def restore_env(saved):
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

for line in control_in:
    request = json.loads(line)
    count += 1
    send({"type": "execution_count", "execution_count": count})
    saved_env = set_env(request.get("env") or {})
    try:
        tree = ast.parse(request["code"], "<cell>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace) if last else None
        figures()
        if value is not None:
            send({"type": "result", "results": bundle(value)})
    except BaseException as error:
        lines = traceback.format_exception(type(error), error, error.__traceback__)
        send({"type": "error", "error": {"ename": type(error).__name__, "evalue": str(error), "traceback": [l.rstrip("\n") for l in lines]}})
    restore_env(saved_env)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout.write(request["marker"])
    sys.stdout.flush()
    sys.stderr.write(request["marker"])
    sys.stderr.flush()
    send({"type": "done", "execution_count": count})
`;
