/** A small API reference rendered in the browser from /openapi.json (no external assets). */
export const referencePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Paddock API reference</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d2430; }
  h1 { font-size: 1.6rem; } h2 { margin-top: 2rem; text-transform: capitalize; }
  .operation { border: 1px solid #d8dde6; border-radius: 6px; margin: .6rem 0; padding: .5rem .8rem; }
  .method { display: inline-block; min-width: 4.5rem; font-weight: 700; font-family: ui-monospace, monospace; }
  code, pre { font-family: ui-monospace, monospace; font-size: 13px; }
  pre { background: #f5f7fa; padding: .6rem; overflow: auto; border-radius: 4px; }
  details summary { cursor: pointer; color: #445; }
</style>
</head>
<body>
<h1>Paddock API reference</h1>
<p id="intro">Loading <a href="/openapi.json">/openapi.json</a>…</p>
<div id="operations"></div>
<script>
fetch("/openapi.json").then((r) => r.json()).then((doc) => {
  document.getElementById("intro").textContent = doc.info.description;
  const groups = {};
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = (op.tags && op.tags[0]) || "other";
      (groups[tag] = groups[tag] || []).push({ path, method, op });
    }
  }
  const root = document.getElementById("operations");
  for (const [tag, ops] of Object.entries(groups)) {
    const heading = document.createElement("h2");
    heading.textContent = tag;
    root.append(heading);
    for (const { path, method, op } of ops) {
      const box = document.createElement("div");
      box.className = "operation";
      const title = document.createElement("div");
      title.innerHTML = '<span class="method"></span> <code></code>';
      title.querySelector(".method").textContent = method.toUpperCase();
      title.querySelector("code").textContent = path;
      box.append(title);
      const details = document.createElement("details");
      details.innerHTML = "<summary>schema</summary><pre></pre>";
      details.querySelector("pre").textContent = JSON.stringify({ parameters: op.parameters, requestBody: op.requestBody, responses: op.responses }, null, 2);
      box.append(details);
      root.append(box);
    }
  }
});
</script>
</body>
</html>
`;
