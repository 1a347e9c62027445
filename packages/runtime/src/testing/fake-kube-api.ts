import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** Any JSON value: objects of every kind, read by tests field by field. */
// biome-ignore lint/suspicious/noExplicitAny: see above.
type Json = any;

/** A Kubernetes object as the fake keeps it: plain JSON. */
export type KubeObject = Record<string, Json> & {
  metadata: { name: string; namespace?: string; uid: string; resourceVersion: string; [key: string]: Json };
};

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

interface Fault {
  method: string;
  path: RegExp;
  status: number;
  message: string;
  times: number;
}

interface Watcher {
  response: ServerResponse;
  selector: Record<string, string>;
}

interface Target {
  resource: string;
  namespace: string;
  name?: string;
  subresource?: string;
}

/**
 * A stand-in for the parts of the Kubernetes API server the Kubernetes runtime calls: pods
 * (with watch and log), secrets, configmaps, networkpolicies, jobs, runtimeclasses and
 * selfsubjectaccessreviews. Objects live in memory with resourceVersions; pod changes are kept
 * as watch events. Nothing runs: the test plays the scheduler, kubelet and job controller by
 * setting statuses, and injects faults (errors, dropped or expired watches).
 */
export class FakeKubeApi {
  readonly requests: FakeRequest[] = [];
  /** `verb resource[/subresource]` pairs that access reviews deny, e.g. "delete pods". */
  readonly denied = new Set<string>();
  /** Text each pod's log answers with. */
  readonly podLogs = new Map<string, string>();
  /** Called after a pod is created (the test decides what the "kubelet" does with it). */
  onPodCreated: ((pod: KubeObject) => void) | undefined;
  /** Called once a deleted pod is gone. */
  onPodDeleted: ((pod: KubeObject) => void) | undefined;
  /** Called after a Job is created (the test plays the job controller). */
  onJobCreated: ((job: KubeObject) => void) | undefined;
  /** Milliseconds a deleted pod stays terminating before it is gone. */
  podDeletionDelayMs = 0;

  private readonly objects = new Map<string, KubeObject>();
  private readonly events: Array<{ version: number; type: string; object: KubeObject }> = [];
  private readonly watchers = new Set<Watcher>();
  private readonly faults: Fault[] = [];
  private version = 1;
  /** Watches from a resourceVersion older than this get 410 Gone. */
  private oldestWatchable = 0;
  private nextWatchStatus: number | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeKubeApi> {
    let fake: FakeKubeApi | undefined;
    const server = createServer((request, response) => {
      void fake?.handle(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    fake = new FakeKubeApi(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return fake;
  }

  /** Writes a kubeconfig pointing at this server into `directory`; returns its path. */
  writeKubeconfig(directory: string): string {
    const path = join(directory, "kubeconfig.json");
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        // The client refuses plain HTTP unless TLS checks are off; the stand-in speaks plain HTTP.
        clusters: [{ name: "fake", cluster: { server: this.url, "insecure-skip-tls-verify": true } }],
        users: [{ name: "fake", user: { token: "fake-token" } }],
        contexts: [{ name: "fake", context: { cluster: "fake", user: "fake" } }],
        "current-context": "fake",
      }),
    );
    return path;
  }

  async close(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- what tests drive -------------------------------------------------------------------

  get(resource: string, name: string, namespace = "paddock"): KubeObject | undefined {
    return this.objects.get(key(resource, namespace, name));
  }

  list(resource: string): KubeObject[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${resource}/`))
      .map(([, object]) => object);
  }

  /** Puts an object in place as if someone else had created it (a RuntimeClass, say). */
  put(
    resource: string,
    object: Omit<KubeObject, "metadata"> & {
      metadata: { name: string; namespace?: string; [key: string]: Json };
    },
  ): KubeObject {
    const stored = this.stamp(
      resource,
      structuredClone(object) as KubeObject,
      object.metadata.namespace ?? "",
    );
    this.objects.set(key(resource, stored.metadata.namespace ?? "", stored.metadata.name), stored);
    return stored;
  }

  /**
   * Merges `status` into the pod's status, as the kubelet reports, and tells the watchers;
   * `unseen` changes it without a watch event (an event the client missed).
   */
  setPodStatus(name: string, status: Record<string, unknown>, options: { unseen?: boolean } = {}): void {
    const pod = this.get("pods", name);
    if (!pod) throw new Error(`no pod ${name}`);
    pod.status = { ...pod.status, ...status };
    this.bump(pod);
    if (options.unseen)
      this.events.push({ version: this.version, type: "MODIFIED", object: structuredClone(pod) });
    else this.emit("MODIFIED", pod);
  }

  /** A pod running on `node` with `ip`, its sandbox container started. */
  runPod(name: string, ip: string, node = "node-1"): void {
    const pod = this.get("pods", name);
    if (!pod) throw new Error(`no pod ${name}`);
    pod.spec.nodeName = node;
    this.setPodStatus(name, {
      phase: "Running",
      podIP: ip,
      containerStatuses: pod.spec.containers.map((container: { name: string; image: string }) => ({
        name: container.name,
        image: container.image,
        containerID: `containerd://${container.name}-${pod.metadata.uid}`,
        ready: true,
        restartCount: 0,
        state: { running: { startedAt: new Date().toISOString() } },
      })),
    });
  }

  /** Sets a Job's status as the job controller would. */
  setJobStatus(name: string, status: Record<string, unknown>): void {
    const job = this.get("jobs", name);
    if (!job) throw new Error(`no job ${name}`);
    job.status = { ...job.status, ...status };
    this.bump(job);
  }

  /** The next `times` requests matching `method` and `path` answer `status`. */
  fail(
    method: string,
    path: RegExp,
    status: number,
    options: { times?: number; message?: string } = {},
  ): void {
    this.faults.push({
      method,
      path,
      status,
      times: options.times ?? 1,
      message: options.message ?? "injected",
    });
  }

  /** Closes every open watch connection (a lost connection, from the client's side). */
  dropWatches(): void {
    for (const watcher of this.watchers) watcher.response.destroy();
    this.watchers.clear();
  }

  /** Forgets the event history: a watch resuming from any earlier resourceVersion gets 410 Gone. */
  expireHistory(): void {
    this.oldestWatchable = this.version;
    this.events.length = 0;
  }

  /** Ends every open watch with a 410 Gone event, as a server does when a watcher falls behind. */
  expireWatches(): void {
    this.expireHistory();
    for (const watcher of this.watchers) watcher.response.end(goneEvent);
    this.watchers.clear();
  }

  /** The next watch request answers this HTTP status instead of a stream. */
  failNextWatch(status: number): void {
    this.nextWatchStatus = status;
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  requestsTo(method: string, path: RegExp): FakeRequest[] {
    return this.requests.filter((request) => request.method === method && path.test(request.path));
  }

  // --- the API --------------------------------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", this.url);
    const text = await readBody(request);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const method = request.method ?? "GET";
    this.requests.push({ method, path: url.pathname, query: url.searchParams, body });
    const fault = this.faults.find((f) => f.times > 0 && f.method === method && f.path.test(url.pathname));
    if (fault) {
      fault.times--;
      return sendStatus(response, fault.status, fault.message);
    }
    const target = parseTarget(url.pathname);
    if (!target) return sendStatus(response, 404, `the fake does not serve ${url.pathname}`);
    const selector = parseSelector(url.searchParams.get("labelSelector") ?? "");
    const id = key(target.resource, target.namespace, target.name ?? "");
    const existing = target.name ? this.objects.get(id) : undefined;

    if (target.resource === "selfsubjectaccessreviews" && method === "POST") {
      const attributes = (body as KubeObject).spec.resourceAttributes;
      const resource = attributes.subresource
        ? `${attributes.resource}/${attributes.subresource}`
        : attributes.resource;
      const allowed = !this.denied.has(`${attributes.verb} ${resource}`);
      return sendJson(response, 201, { ...(body as object), status: { allowed } });
    }
    if (method === "GET" && target.subresource === "log") {
      if (!existing) return sendStatus(response, 404, `pods "${target.name}" not found`);
      let log = this.podLogs.get(target.name ?? "") ?? "";
      const tail = Number(url.searchParams.get("tailLines") ?? "0");
      if (tail > 0)
        log = log
          .split("\n")
          .slice(-tail - 1)
          .join("\n");
      const limit = Number(url.searchParams.get("limitBytes") ?? "0");
      if (limit > 0) log = log.slice(0, limit);
      response.writeHead(200, { "content-type": "text/plain" });
      return void response.end(log);
    }
    if (method === "GET" && !target.name && url.searchParams.get("watch") === "true") {
      return this.watch(url, selector, response);
    }
    if (method === "GET" && !target.name) {
      const items = this.list(target.resource).filter(
        (object) => object.metadata.namespace === target.namespace && matches(object, selector),
      );
      return sendJson(response, 200, {
        kind: "List",
        apiVersion: "v1",
        metadata: { resourceVersion: String(this.version) },
        items,
      });
    }
    if (method === "POST" && !target.name) {
      const object = body as KubeObject;
      const name = object.metadata?.name;
      if (this.objects.has(key(target.resource, target.namespace, name))) {
        return sendStatus(response, 409, `${target.resource} "${name}" already exists`, "AlreadyExists");
      }
      const created = this.create(target.resource, target.namespace, object);
      sendJson(response, 201, created);
      if (target.resource === "pods") setImmediate(() => this.onPodCreated?.(created));
      if (target.resource === "jobs") setImmediate(() => this.onJobCreated?.(created));
      return;
    }
    if (!existing)
      return sendStatus(response, 404, `${target.resource} "${target.name}" not found`, "NotFound");
    if (method === "GET") return sendJson(response, 200, existing);
    if (method === "DELETE") {
      this.remove(target.resource, existing);
      return sendJson(response, 200, existing);
    }
    if (method === "PUT") {
      const replacement = body as KubeObject;
      const expected = replacement.metadata?.resourceVersion;
      if (expected && expected !== existing.metadata.resourceVersion) {
        return sendStatus(response, 409, "the object has been modified", "Conflict");
      }
      const updated = {
        ...replacement,
        metadata: { ...replacement.metadata, uid: existing.metadata.uid },
      } as KubeObject;
      this.bump(updated);
      this.objects.set(id, updated);
      return sendJson(response, 200, updated);
    }
    if (method === "PATCH") {
      for (const operation of body as Array<{ op: string; path: string; value: unknown }>)
        applyPatch(existing, operation);
      this.bump(existing);
      if (target.resource === "pods") this.emit("MODIFIED", existing);
      return sendJson(response, 200, existing);
    }
    return sendStatus(response, 405, `${method} is not served`);
  }

  private create(resource: string, namespace: string, object: KubeObject): KubeObject {
    const created = this.stamp(resource, structuredClone(object), namespace);
    if (resource === "secrets" && created.stringData) {
      created.data = Object.fromEntries(
        Object.entries(created.stringData as Record<string, string>).map(([k, v]) => [
          k,
          Buffer.from(v).toString("base64"),
        ]),
      );
      delete created.stringData;
    }
    if (resource === "pods") created.status = { phase: "Pending" };
    this.objects.set(key(resource, namespace, created.metadata.name), created);
    if (resource === "pods") this.emit("ADDED", created);
    return created;
  }

  private stamp(resource: string, object: KubeObject, namespace: string): KubeObject {
    object.metadata = {
      ...object.metadata,
      ...(namespace ? { namespace } : {}),
      uid: randomUUID(),
      creationTimestamp: new Date().toISOString(),
    };
    if (resource === "pods" && !object.status) object.status = {};
    this.bump(object);
    return object;
  }

  /** Pods terminate first (deletionTimestamp, containers killed), then go; dependents follow their owner. */
  private remove(resource: string, object: KubeObject): void {
    const id = key(resource, object.metadata.namespace ?? "", object.metadata.name);
    const gone = () => {
      if (this.objects.get(id) !== object) return;
      this.objects.delete(id);
      if (resource === "pods") {
        this.emit("DELETED", object);
        this.onPodDeleted?.(object);
      }
      this.collectGarbage(object.metadata.uid);
    };
    if (resource !== "pods") {
      gone();
      return;
    }
    if (object.metadata.deletionTimestamp) return;
    object.metadata.deletionTimestamp = new Date().toISOString();
    for (const status of object.status?.containerStatuses ?? []) {
      if (status.state?.running) status.state = { terminated: { exitCode: 137, reason: "Error" } };
    }
    this.bump(object);
    this.emit("MODIFIED", object);
    setTimeout(gone, this.podDeletionDelayMs);
  }

  private collectGarbage(ownerUid: string): void {
    for (const [id, object] of [...this.objects]) {
      const owners = (object.metadata.ownerReferences ?? []) as Array<{ uid: string }>;
      if (owners.length && owners.every((owner) => owner.uid === ownerUid)) {
        this.remove(id.split("/")[0] ?? "", object);
      }
    }
  }

  private bump(object: KubeObject): void {
    object.metadata.resourceVersion = String(++this.version);
  }

  private emit(type: string, object: KubeObject): void {
    const event = { version: this.version, type, object: structuredClone(object) };
    this.events.push(event);
    for (const watcher of this.watchers) {
      if (matches(event.object, watcher.selector))
        watcher.response.write(`${JSON.stringify({ type, object: event.object })}\n`);
    }
  }

  private watch(url: URL, selector: Record<string, string>, response: ServerResponse): void {
    if (this.nextWatchStatus) {
      const status = this.nextWatchStatus;
      this.nextWatchStatus = undefined;
      sendStatus(response, status, "injected watch failure");
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    const from = url.searchParams.get("resourceVersion");
    if (from && Number(from) < this.oldestWatchable) {
      response.end(goneEvent);
      return;
    }
    if (from) {
      for (const event of this.events) {
        if (event.version > Number(from) && matches(event.object, selector)) {
          response.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
        }
      }
    } else {
      for (const pod of this.list("pods").filter((object) => matches(object, selector))) {
        response.write(`${JSON.stringify({ type: "ADDED", object: pod })}\n`);
      }
    }
    const watcher = { response, selector };
    this.watchers.add(watcher);
    response.on("close", () => this.watchers.delete(watcher));
  }
}

/** The watch event a server sends a watcher whose resourceVersion it no longer has. */
const goneEvent = `${JSON.stringify({
  type: "ERROR",
  object: {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    code: 410,
    reason: "Expired",
    message: "too old resource version",
  },
})}\n`;

function key(resource: string, namespace: string, name: string): string {
  return `${resource}/${namespace}/${name}`;
}

function parseTarget(path: string): Target | undefined {
  const core = /^\/api\/v1\/namespaces\/([^/]+)\/([a-z]+)(?:\/([^/]+))?(?:\/([a-z]+))?$/.exec(path);
  if (core) {
    return {
      namespace: core[1] ?? "",
      resource: core[2] ?? "",
      ...(core[3] ? { name: core[3] } : {}),
      ...(core[4] ? { subresource: core[4] } : {}),
    };
  }
  const group = /^\/apis\/[a-z0-9.]+\/v1\/(?:namespaces\/([^/]+)\/)?([a-z]+)(?:\/([^/]+))?$/.exec(path);
  if (group)
    return { namespace: group[1] ?? "", resource: group[2] ?? "", ...(group[3] ? { name: group[3] } : {}) };
  return undefined;
}

function parseSelector(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of selector.split(",").filter(Boolean)) {
    const [name, value] = pair.split("=");
    if (name) labels[name] = value ?? "";
  }
  return labels;
}

function matches(object: KubeObject, selector: Record<string, string>): boolean {
  const labels = (object.metadata.labels ?? {}) as Record<string, string>;
  return Object.entries(selector).every(([name, value]) => labels[name] === value);
}

/** JSON Patch `add`/`replace` on an object path (all the runtime sends). */
function applyPatch(object: KubeObject, operation: { op: string; path: string; value: unknown }): void {
  if (operation.op !== "add" && operation.op !== "replace")
    throw new Error(`patch op ${operation.op} not served`);
  const parts = operation.path.split("/").slice(1);
  const last = parts.pop() ?? "";
  let node: Json = object;
  for (const part of parts) node = node[part] ??= {};
  node[last] = operation.value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function sendStatus(response: ServerResponse, code: number, message: string, reason = "Failure"): void {
  sendJson(response, code, { kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code });
}
