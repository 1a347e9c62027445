/**
 * The rich output E2B's code interpreter adds to IPython's, set up in a Python kernel before
 * each cell it runs (idempotent: installed once per kernel): dicts and lists as JSON, a pandas
 * DataFrame's columns as `data`, and a matplotlib figure's plotted values as a `chart`.
 */

/** The MIME types the kernel publishes a DataFrame's columns and a figure's chart under. */
export const DATA_MIME = "application/vnd.paddock.dataframe+json";
export const CHART_MIME = "application/vnd.paddock.chart+json";

/**
 * Runs in a fresh namespace (nothing lands in the user's), registers formatters on the running
 * IPython shell. Formatters register by type name, so nothing imports pandas or matplotlib
 * before the user does; every value goes out JSON-safe (NaN and infinities as null, numpy
 * values as Python ones, dates as ISO 8601 strings), and a formatter never raises.
 */
const install = String.raw`
import sys

def install():
    import datetime, math, re
    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    shell = get_ipython()
    if shell is None:
        return

    def plain(value):
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            if isinstance(value, numpy.ndarray):
                return [plain(item) for item in value]
            if isinstance(value, numpy.datetime64):
                return None if numpy.isnat(value) else str(numpy.datetime_as_string(value))
            if isinstance(value, numpy.generic):
                value = value.item()
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, dict):
            return {str(key): plain(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
            # pandas' NaT is a datetime that equals nothing, itself included.
            return value.isoformat() if value == value else None
        return str(value)

    def quietly(render):
        def safe(value):
            try:
                return render(value)
            except Exception:
                return None
        return safe

    class DataFormatter(BaseFormatter):
        format_type = Unicode("${DATA_MIME}")
        print_method = ObjectName("_repr_paddock_dataframe_")
        _return_type = (dict,)

    class ChartFormatter(BaseFormatter):
        format_type = Unicode("${CHART_MIME}")
        print_method = ObjectName("_repr_paddock_chart_")
        _return_type = (dict,)

        def __call__(self, obj):
            # The inline backend, as it loads, drops every formatter's printer for figures: they
            # are recognised here instead.
            module = sys.modules.get("matplotlib.figure")
            return quietly(figure_chart)(obj) if module and isinstance(obj, module.Figure) else None

    def frame_columns(frame):
        return {str(name): plain(list(column)) for name, column in frame.items()}

    unit_pattern = re.compile(r"[(\[]([^()\[\]]+)[)\]]\s*$")

    def shown(label):
        """matplotlib names the artists it keeps out of legends with a leading underscore."""
        label = str(label or "")
        return "" if label.startswith("_") else label

    def as_text(value):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)

    def close(a, b):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))

    def reading(axis):
        """An axis's scale, and how a drawn coordinate reads in the data's own terms."""
        from matplotlib import category, dates
        locator = axis.get_major_locator()
        if isinstance(locator, dates.DateLocator):
            return "datetime", lambda v: dates.num2date(v).isoformat()
        if isinstance(locator, category.StrCategoryLocator):
            names = {index: name for name, index in axis.units._mapping.items()}
            return "categorical", lambda v: names.get(round(v), plain(v))
        return axis.get_scale(), plain

    def chart_2d(ax, kind, ticks=False):
        chart = {"type": kind, "title": ax.get_title()}
        for name, axis, label in (("x", ax.xaxis, ax.get_xlabel()), ("y", ax.yaxis, ax.get_ylabel())):
            chart[name + "_label"] = label
            unit = unit_pattern.search(label)
            if unit:
                chart[name + "_unit"] = unit.group(1).strip()
            if ticks:
                scale, read = reading(axis)
                low, high = sorted(axis.get_view_interval())
                slack = 1e-9 * (high - low)
                where = [t for t in axis.get_majorticklocs() if low - slack <= t <= high + slack]
                chart[name + "_scale"] = scale
                chart[name + "_ticks"] = [read(t) for t in where]
                chart[name + "_tick_labels"] = [str(t) for t in axis.get_major_formatter().format_ticks(where)]
        return chart

    def pie(ax):
        elements = [{"label": shown(w.get_label()), "angle": abs(w.theta2 - w.theta1), "radius": w.r} for w in ax.patches]
        return {"type": "pie", "title": ax.get_title(), "elements": elements}

    def bars(ax, containers):
        elements = []
        for container in containers:
            horizontal = getattr(container, "orientation", None) == "horizontal"
            read = reading(ax.yaxis if horizontal else ax.xaxis)[1]
            values = getattr(container, "datavalues", None)
            for index, bar in enumerate(container.patches):
                middle = bar.get_y() + bar.get_height() / 2 if horizontal else bar.get_x() + bar.get_width() / 2
                size = values[index] if values is not None else (bar.get_width() if horizontal else bar.get_height())
                elements.append({"label": as_text(read(middle)), "group": shown(container.get_label()), "value": plain(size)})
        return {**chart_2d(ax, "bar"), "elements": elements}

    def boxes(ax):
        """Box plots, read from what boxplot() draws: a closed rectangle per box (a line, or a
        patch with patch_artist), a median across it, whiskers from its middle, flier markers."""
        from matplotlib.patches import PathPatch
        outlines = [line.get_xydata() for line in ax.get_lines()]
        outlines += [patch.get_path().vertices for patch in ax.patches if isinstance(patch, PathPatch)]
        segments = [line.get_xydata() for line in ax.get_lines() if len(line.get_xdata()) == 2]
        markers = [line.get_xydata() for line in ax.get_lines() if line.get_linestyle() == "None"]
        for flip in (False, True):
            turn = (lambda points: [(float(y), float(x)) for x, y in points]) if flip else (lambda points: [(float(x), float(y)) for x, y in points])
            found = []
            for outline in outlines:
                points = turn(outline)
                xs, ys = sorted({x for x, _ in points}), sorted({y for _, y in points})
                if len(points) < 4 or len(xs) != 2 or len(ys) != 2:
                    continue
                (left, right), (q1, q3), middle = xs, ys, (xs[0] + xs[1]) / 2
                box = {"first_quartile": q1, "third_quartile": q3}
                for (xa, ya), (xb, yb) in map(turn, segments):
                    if close(xa, middle) and close(xb, middle):
                        if close(max(ya, yb), q1):
                            box["min"] = min(ya, yb)
                        elif close(min(ya, yb), q3):
                            box["max"] = max(ya, yb)
                    elif close(ya, yb) and close(min(xa, xb), left) and close(max(xa, xb), right) and q1 <= ya <= q3:
                        box["median"] = ya
                if not {"median", "min", "max"} <= box.keys():
                    continue
                box["outliers"] = [y for mark in map(turn, markers) for x, y in mark if close(x, middle)]
                read = reading(ax.yaxis if flip else ax.xaxis)[1]
                ticks = (ax.yaxis if flip else ax.xaxis).get_majorticklocs()
                labels = (ax.get_yticklabels() if flip else ax.get_xticklabels())
                named = [label.get_text() for tick, label in zip(ticks, labels) if close(tick, middle) and label.get_text()]
                found.append({"label": named[0] if named else as_text(read(middle)), **box})
            if found:
                return {**chart_2d(ax, "box_and_whisker"), "elements": found}
        return None

    def axes_chart(ax):
        from matplotlib.collections import PathCollection
        from matplotlib.container import BarContainer
        from matplotlib.patches import Wedge

        if ax.patches and all(isinstance(patch, Wedge) for patch in ax.patches):
            return pie(ax)
        containers = [c for c in ax.containers if isinstance(c, BarContainer)]
        if containers:
            return bars(ax, containers)
        box_chart = boxes(ax)
        if box_chart:
            return box_chart
        lines = [line for line in ax.get_lines() if line.get_visible()]
        points = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_visible()]
        if bool(lines) == bool(points):
            return {**chart_2d(ax, "unknown"), "elements": []}
        chart = chart_2d(ax, "line" if lines else "scatter", ticks=True)
        if lines:
            chart["elements"] = [
                {"label": shown(line.get_label()), "points": [[plain(x), plain(y)] for x, y in zip(line.get_xdata(), line.get_ydata())]}
                for line in lines
            ]
        else:
            read_x, read_y = reading(ax.xaxis)[1], reading(ax.yaxis)[1]
            chart["elements"] = [
                {"label": shown(c.get_label()), "points": [[read_x(x), read_y(y)] for x, y in c.get_offsets()]}
                for c in points
            ]
        return chart

    def figure_chart(figure):
        charts = [axes_chart(ax) for ax in figure.get_axes() if ax.get_visible() and getattr(ax, "_colorbar", None) is None]
        if len(charts) == 1:
            return charts[0]
        if not charts:
            return None
        title = getattr(figure, "_suptitle", None)
        return {"type": "superchart", "title": title.get_text() if title else "", "elements": charts}

    formatters = shell.display_formatter.formatters
    formatters["${DATA_MIME}"] = DataFormatter(parent=shell.display_formatter)
    formatters["${DATA_MIME}"].for_type_by_name("pandas.core.frame", "DataFrame", quietly(frame_columns))
    formatters["${CHART_MIME}"] = ChartFormatter(parent=shell.display_formatter)
    for kind in (dict, list):
        formatters["application/json"].for_type(kind, quietly(plain))

# Installed once per kernel: a module of that name marks it.
if "_paddock_rich_output" not in sys.modules:
    install()
    sys.modules["_paddock_rich_output"] = type(sys)("_paddock_rich_output")
`;

/** The set-up as one silent cell: the code runs in a namespace of its own. */
export const RICH_OUTPUT_SETUP = `exec(${JSON.stringify(install)}, {})`;
