"""What the control plane answers, as dataclasses with snake_case fields (the JSON's camelCase keys
are mapped; metadata and other free-form maps keep their keys). Names follow the TypeScript SDK's
types (packages/sdk/src/types.ts), which are generated from openapi/control-plane.json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict


KeyScope = Literal["sandboxes", "memory", "secrets"]
PlanId = Literal["free", "pro"]
PaymentOperation = Literal[
    "create_customer",
    "list_customers",
    "create_invoice",
    "list_invoices",
    "finalize_invoice",
    "create_payment_link",
    "list_payment_links",
]
InvoiceStatus = Literal["draft", "open", "paid", "uncollectible", "void"]


@dataclass(frozen=True)
class Pagination:
    page: int
    page_size: int
    total_items: int
    total_pages: int
    has_next_page: bool


# Accounts and keys


@dataclass(frozen=True)
class Account:
    id: str
    email: str
    plan: str
    created_at: str


@dataclass(frozen=True)
class Session:
    """A login: ``token`` authenticates like an unscoped API key until ``expires_at``."""

    token: str
    expires_at: str
    account: Account


@dataclass(frozen=True)
class ApiKey:
    id: str
    name: str | None
    prefix: str
    scope: KeyScope | None
    created_at: str
    expires_at: str | None
    last_used_at: str | None


@dataclass(frozen=True)
class ApiKeyWithSecret:
    """A new or rotated key; ``secret`` is shown this once."""

    key: ApiKey
    secret: str


# Sandboxes


@dataclass(frozen=True)
class SandboxLifecycle:
    """How a sandbox sleeps and wakes, as the server holds it (decision 0190)."""

    on_timeout: Literal["kill", "pause"]
    """What its timeout does: delete it, or pause it (a resume sets the same timeout again)."""
    idle_timeout: int | None
    """Seconds without use after which it pauses; None: never."""
    processes_keep_awake: bool
    """A command, code run or terminal still running counts as use."""
    auto_resume: bool
    """A call on it while paused resumes it first."""
    keep_memory: bool
    """A pause to disk keeps its processes and memory where the runtime can."""
    max_paused: int | None
    """Seconds it may stay paused before it is deleted; None: kept."""


NEVER: Literal["never"] = "never"
"""For ``Lifecycle.idle_timeout`` and ``max_paused``: never, whatever the plan's default."""


@dataclass(frozen=True)
class Lifecycle:
    """How a new sandbox sleeps and wakes. A field left None takes the server's default
    (``idle_timeout`` and ``max_paused``: the account's plan's); ``NEVER`` turns those off."""

    on_timeout: Literal["kill", "pause"] | None = None
    idle_timeout: int | Literal["never"] | None = None
    processes_keep_awake: bool | None = None
    auto_resume: bool | None = None
    keep_memory: bool | None = None
    max_paused: int | Literal["never"] | None = None


@dataclass(frozen=True)
class SandboxInfo:
    id: str
    state: str
    template: str | None
    metadata: dict[str, str]
    created_at: str
    expires_at: str | None
    reason: str | None = None
    lifecycle: SandboxLifecycle | None = None
    paused_to: Literal["memory", "disk"] | None = None
    """Where a paused sandbox sleeps: frozen in memory, or on disk, off the host's memory."""
    memory_preserved: bool | None = None
    """On disk: True when its processes and memory come back; False when they start again."""
    last_activity_at: str | None = None
    idle_at: str | None = None
    """When it pauses for want of use unless used before; None: it does not idle out."""
    paused_until: str | None = None
    """When a paused sandbox is deleted unless resumed before."""


@dataclass(frozen=True)
class SandboxList:
    items: list[SandboxInfo]
    pagination: Pagination


@dataclass(frozen=True)
class TemplateVariable:
    name: str
    required: bool
    description: str
    role: Literal["credential", "base-url", "model"] | None = None


@dataclass(frozen=True)
class TemplatePort:
    port: int
    name: str
    description: str
    ready: bool


@dataclass(frozen=True)
class Template:
    id: str
    name: str
    description: str
    npm: dict[str, str]
    resource_limits: dict[str, str]
    env: list[TemplateVariable]
    ports: list[TemplatePort]
    version: str | None = None


@dataclass(frozen=True)
class SandboxMetrics:
    """One sample of a sandbox's CPU and memory, in execd's field names."""

    cpu_count: float
    cpu_used_pct: float
    """CPU use since the previous sample, 0-100 % of ``cpu_count``."""
    mem_total_mib: float
    mem_used_mib: float
    timestamp: int
    """When the sample was taken, in Unix milliseconds."""


@dataclass(frozen=True)
class DiagnosticText:
    text: str
    truncated: bool
    """True when only the newest 8 MiB came."""


@dataclass(frozen=True)
class Endpoint:
    """A URL reaching a port inside the sandbox; the URL itself is the credential."""

    url: str
    token: str
    expires_at: str


@dataclass(frozen=True)
class NetworkRule:
    action: Literal["allow", "deny"]
    target: str
    """A domain, ``*.domain`` (its subdomains, not the domain itself), an IP address or a CIDR."""


@dataclass(frozen=True)
class NetworkPolicyOptions:
    """Outbound policy: rules are checked in order, ``default_action`` applies to the rest."""

    default_action: Literal["allow", "deny"] | None = None
    egress: list[NetworkRule] = field(default_factory=list)


@dataclass(frozen=True)
class EnforcedNetworkPolicy:
    mode: Literal["allow_all", "deny_all", "enforcing"]
    policy: NetworkPolicyOptions


# Templates the account builds (decision 0198)

BuildStatus = Literal["waiting", "building", "ready", "error", "cancelled"]


@dataclass(frozen=True)
class TemplateBuild:
    """One build of an account's template; ``failed_step`` is 1-based, ``reason`` says where and why."""

    id: str
    template_id: str
    status: BuildStatus
    reason: str | None
    failed_step: int | None
    steps: int
    image_bytes: int | None
    created_at: str
    started_at: str | None
    finished_at: str | None


@dataclass(frozen=True)
class AccountTemplate:
    """A template of the account's own; sandboxes start from it by ``name`` once a build is ready."""

    id: str
    name: str
    description: str
    published: bool
    current_build_id: str | None
    """The build sandboxes start from; None until one succeeds."""
    resource_limits: dict[str, str]
    user: str
    workdir: str
    start_command: str | None
    ready_command: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class AccountTemplateDetail(AccountTemplate):
    builds: list[TemplateBuild]


@dataclass(frozen=True)
class BuildStarted:
    template: AccountTemplate
    build: TemplateBuild


@dataclass(frozen=True)
class BuildLogEntry:
    """A line of a build's log: "step 2/3 (Dockerfile line 2): COPY …", a RUN's output, the end."""

    seq: int
    at: str
    level: Literal["info", "warn", "error"]
    message: str


@dataclass(frozen=True)
class BuildLogPage:
    entries: list[BuildLogEntry]
    next: int
    """``from_`` for the next page."""
    status: BuildStatus


@dataclass(frozen=True)
class UploadedFiles:
    hash: str
    """What a ``CopyStep``'s ``files`` names."""
    bytes: int


@dataclass(frozen=True)
class RunStep:
    """Runs ``command`` with ``/bin/sh -c``, as ``user`` (default: the image's current user)."""

    command: str
    user: str | None = None
    force: bool = False
    """Rebuild this step and every one after it even when the cache holds it."""


@dataclass(frozen=True)
class CopyStep:
    """Copies ``src`` (a path in the uploaded ``files``; ``.`` is all of it; ``*``/``?`` match
    within a name) to ``dest`` in the image (a directory when it ends in ``/``)."""

    files: str
    """The ``hash`` answered by ``templates.upload_files``."""
    src: str
    dest: str
    user: str | None = None
    mode: int | None = None
    """File mode of the copied files, e.g. ``0o755`` (directories keep theirs)."""
    force: bool = False


@dataclass(frozen=True)
class EnvStep:
    values: dict[str, str]
    force: bool = False


@dataclass(frozen=True)
class WorkdirStep:
    path: str
    force: bool = False


@dataclass(frozen=True)
class UserStep:
    user: str
    force: bool = False


BuildStep = RunStep | CopyStep | EnvStep | WorkdirStep | UserStep


# Commands, code and files


@dataclass(frozen=True)
class CommandResult:
    stdout: str
    stderr: str
    exit_code: int
    """-1 for a background command (it is still running)."""
    truncated: bool = False
    """True when a buffered run dropped output past the server's limit (streamed runs have none)."""
    oom_killed: bool = False
    """True when the kernel killed the command for memory (exit code 137) and the sandbox lived on."""


@dataclass(frozen=True)
class Stdout:
    """A piece of a streamed command's standard output."""

    text: str


@dataclass(frozen=True)
class Stderr:
    text: str


@dataclass(frozen=True)
class CommandExit:
    """The last event of a streamed command."""

    exit_code: int


CommandEvent = Stdout | Stderr | CommandExit


@dataclass(frozen=True)
class CodeContext:
    """A code context: variables and imports persist between ``run_code`` calls in it."""

    id: str
    language: str


@dataclass(frozen=True)
class CodeError:
    name: str
    value: str
    traceback: list[str]


@dataclass(frozen=True)
class CodeResult:
    stdout: str
    stderr: str
    results: list[dict[str, Any]]
    """Rich results as the kernel returns them: MIME type → data (``text/plain``, ``image/png``, …)."""
    error: CodeError | None
    execution_count: int | None


@dataclass(frozen=True)
class FileInfo:
    path: str
    type: str
    size: int
    mode: int
    """Permission bits as ``ls`` shows them in octal, written in decimal digits (644, 755)."""
    owner: str
    group: str
    modified_at: str


@dataclass(frozen=True)
class WriteResult:
    path: str
    size: int


# Secrets, memory, usage, billing


@dataclass(frozen=True)
class SecretInfo:
    name: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class VolumeInfo:
    id: str
    name: str
    size_bytes: int
    created_at: str


@dataclass(frozen=True)
class VolumeMount:
    """One of the account's volumes, mounted at ``mount_path`` of a new sandbox."""

    volume: str
    """The volume's name."""
    mount_path: str
    read_only: bool = False
    """Read-only by the host's enforcement: the sandbox cannot remount it."""
    sub_path: str | None = None
    """A directory inside the volume to mount instead of its root; made when missing."""


@dataclass(frozen=True)
class MemoryEntry:
    id: str
    content: str
    metadata: dict[str, Any]
    tags: list[str]
    created_at: str


@dataclass(frozen=True)
class MemoryList:
    items: list[MemoryEntry]
    pagination: Pagination


@dataclass(frozen=True)
class MemorySearchHit(MemoryEntry):
    score: float
    snippet: str
    """The matching passage, matches wrapped in ``<mark>``."""


@dataclass(frozen=True)
class UsagePeriod:
    id: str
    start: str
    end: str


@dataclass(frozen=True)
class UsageDay:
    date: str
    """``YYYY-MM-DD`` (UTC)."""
    minutes: float


@dataclass(frozen=True)
class PlanRef:
    id: str
    name: str


@dataclass(frozen=True)
class UsageSummary:
    period: UsagePeriod
    plan: PlanRef
    used_minutes: float
    included_minutes: float | None
    remaining_minutes: float | None
    limit_reached: bool
    running_sandboxes: int
    days: list[UsageDay] = field(default_factory=list)
    """Each day of the period up to today (UTC), adding up to ``used_minutes``."""


@dataclass(frozen=True)
class SandboxUsage:
    sandbox_id: str
    template: str | None
    state: str
    minutes: float
    running: bool
    started_at: str


@dataclass(frozen=True)
class SandboxUsageList:
    period: str
    items: list[SandboxUsage]
    pagination: Pagination


@dataclass(frozen=True)
class Plan:
    id: str
    name: str
    price_cents: int
    currency: str
    included_minutes: float | None


@dataclass(frozen=True)
class CurrentPlan:
    plan: str
    subscription_status: str | None


@dataclass(frozen=True)
class PlanList:
    items: list[Plan]
    current: CurrentPlan
    checkout_available: bool


@dataclass(frozen=True)
class CheckoutSession:
    """Send the buyer to ``url``; the plan changes once Stripe reports the payment."""

    id: str
    url: str


# Payments (bring your own Stripe key)


@dataclass(frozen=True)
class PaymentCredentials:
    provider: Literal["stripe"]
    masked_key: str
    livemode: bool
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class AgentKey:
    prefix: str
    allowed_operations: list[str]
    currency: str
    max_amount: int
    total_limit: int | None
    amount_used: int
    created_at: str
    last_used_at: str | None


@dataclass(frozen=True)
class AgentKeyWithSecret(AgentKey):
    key: str
    """The agent key itself, shown this once."""


@dataclass(frozen=True)
class Customer:
    id: str
    email: str | None
    name: str | None
    description: str | None
    metadata: dict[str, str]
    created_at: str


@dataclass(frozen=True)
class CustomerList:
    items: list[Customer]
    has_more: bool


@dataclass(frozen=True)
class InvoiceLine:
    description: str | None
    quantity: int | None
    amount: int


@dataclass(frozen=True)
class Invoice:
    id: str
    customer: str
    status: str
    currency: str
    total: int
    amount_due: int
    hosted_invoice_url: str | None
    due_date: str | None
    line_items: list[InvoiceLine]
    metadata: dict[str, str]
    created_at: str


@dataclass(frozen=True)
class InvoiceList:
    items: list[Invoice]
    has_more: bool


@dataclass(frozen=True)
class PaymentLink:
    id: str
    url: str
    active: bool
    currency: str
    metadata: dict[str, str]


@dataclass(frozen=True)
class PaymentLinkList:
    items: list[PaymentLink]
    has_more: bool


class InvoiceItem(TypedDict):
    """One line of a new invoice; amounts in the currency's smallest unit (cents)."""

    description: str
    unit_amount: int
    quantity: NotRequired[int]


class PaymentLinkItem(TypedDict):
    name: str
    unit_amount: int
    quantity: NotRequired[int]
