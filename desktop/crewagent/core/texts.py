"""English texts the core shows to users, each a stable template the UI translates when it shows it.

The core stays in English and imports no Qt: the log, the command line and the model see exactly
these texts (the worker's own messages to the window are catalogued here too). A window showing
one of them translates it at display time (``crewagent.ui.core_texts`` matches the text back to
its template and fills the translated template with the same fields).
``QT_TRANSLATE_NOOP`` is a plain identity function here; ``pyside6-lupdate`` sees the calls and
extracts the templates into the catalogue under the context ``core`` (``make translations``).

A template is a ``str.format`` string with named fields (``{path}``, ``{name!r}``). Keep the
fields' names when changing a text: the translations name them too. Texts that are data (file
contents, model output, the user's titles) are never catalogued.
"""

from __future__ import annotations

CONTEXT = "core"


def QT_TRANSLATE_NOOP(context: str, source: str) -> str:  # noqa: N802 - the name lupdate looks for
    """Marks ``source`` for extraction into the catalogue; returns it unchanged."""
    return source


# -- interrupted and stopped turns (persisted in error parts, shown in the timeline) -----------------
STREAM_INTERRUPTED = QT_TRANSLATE_NOOP("core", "The app stopped while the answer was streaming.")
STREAM_INTERRUPTED_BLOCK = QT_TRANSLATE_NOOP("core", "The app stopped while this answer was streaming; the text above is what had arrived.")
STREAM_STOPPED = QT_TRANSLATE_NOOP("core", "Stopped by the user while the answer was streaming.")
SUBAGENT_INTERRUPTED = QT_TRANSLATE_NOOP("core", "The app stopped while this subagent was running; its work ends here.")
ENGINE_LOOP_DETECTED = QT_TRANSLATE_NOOP(
    "core", "The same failing call ({tool} with the same arguments) was made {count} times in a row; the turn was stopped to avoid a loop."
)
ENGINE_MAX_TURNS = QT_TRANSLATE_NOOP("core", "The turn reached the limit of {limit} model calls (engine.maxTurns) and was stopped.")
CONTEXT_TOO_LARGE = QT_TRANSLATE_NOOP(
    "core",
    "The current turn does not fit the context budget even with every tool result and large tool argument shortened "
    "to a note: the system prompt and the current turn need {chars} characters / {tokens} tokens (before shortening "
    "{turn_chars} / {turn_tokens}), over the budget of {budget}. Raise the model's context window (Settings > Model > "
    "Context window) or start a new conversation, then press Continue.",
)
CONTEXT_SPILL_FAILED = QT_TRANSLATE_NOOP(
    "core",
    "The current turn is too large to send whole, and its full tool outputs could not be saved for the model to read "
    "({detail}). Free some disk space, then press Continue.",
)

# -- the model provider --------------------------------------------------------------------------------
LLM_TIMEOUT = QT_TRANSLATE_NOOP("core", "The provider did not answer in time.")
LLM_CONNECTION_ENDED = QT_TRANSLATE_NOOP("core", "The connection ended before the model finished its answer.")
LLM_NETWORK = QT_TRANSLATE_NOOP("core", "Network error talking to {where}.")
LLM_NETWORK_DETAIL = QT_TRANSLATE_NOOP("core", "Network error talking to {where} ({detail}).")
LLM_THE_PROVIDER = QT_TRANSLATE_NOOP("core", "the provider")
LLM_KEY_REJECTED = QT_TRANSLATE_NOOP("core", "The API key was rejected (HTTP {status}): {detail}")
LLM_ACCESS_DENIED = QT_TRANSLATE_NOOP("core", "Access denied (HTTP {status}): {detail}")
LLM_RATE_LIMITED = QT_TRANSLATE_NOOP("core", "Rate limited (HTTP 429): {detail}")
LLM_HTTP_TIMEOUT = QT_TRANSLATE_NOOP("core", "The provider timed out (HTTP 408): {detail}")
LLM_BAD_SHAPE = QT_TRANSLATE_NOOP("core", "The provider's response has an unexpected shape: {detail}")
LLM_BAD_JSON = QT_TRANSLATE_NOOP("core", "The provider sent malformed JSON: {detail} (at char {pos}).")
LLM_BAD_CHUNK = QT_TRANSLATE_NOOP("core", "The provider sent a malformed chunk: {detail}.")
LLM_REPORTED = QT_TRANSLATE_NOOP("core", "The provider reported an error: {detail}")
LLM_NOT_OBJECT = QT_TRANSLATE_NOOP("core", "The provider's response is not a JSON object.")
LLM_NO_MESSAGE = QT_TRANSLATE_NOOP("core", "The provider's response holds no message.")
LLM_NO_FINAL = QT_TRANSLATE_NOOP("core", "The provider's answer ended without a final message.")
DEMO_CHUNK_DELAY_INVALID = QT_TRANSLATE_NOOP(
    "core", "{name}={value!r} is not a number of seconds from 0 to 10; unset it to pace the demo as usual."
)

# -- approvals (the summary line of the approval dialog) and refusals ----------------------------------
APPROVE_WRITE = QT_TRANSLATE_NOOP("core", "Write {path}")
APPROVE_WRITE_BYTES = QT_TRANSLATE_NOOP("core", "Write {path} ({size} bytes)")
APPROVE_PATCH = QT_TRANSLATE_NOOP("core", "Patch {path} ({form})")
APPROVE_TASK = QT_TRANSLATE_NOOP("core", "task ({type}): {description}")
USER_DENIED = QT_TRANSLATE_NOOP("core", "The user refused this tool call. Do not retry it; ask the user what to do instead.")
USER_CANCELLED = QT_TRANSLATE_NOOP("core", "The user closed the question without answering.")

# -- tool errors (the result of a failed tool call, shown in the timeline) -----------------------------
TOOL_CALL_INTERRUPTED = QT_TRANSLATE_NOOP("core", "The call was interrupted by the user.")
TOOL_NEVER_RETURNED = QT_TRANSLATE_NOOP(
    "core",
    "The tool call {name} ({call_id}) was interrupted before it returned a result (the app stopped or the call was "
    "cancelled). It may not have completed; check its effects and run it again if it is still needed.",
)
TOOL_UNKNOWN = QT_TRANSLATE_NOOP("core", "No tool named {name!r} is available. Tools: {available}.")
TOOL_ARGS_INVALID = QT_TRANSLATE_NOOP("core", "Arguments of {name} {problem}.")
TOOL_ARGS_SCHEMA = QT_TRANSLATE_NOOP("core", "Invalid arguments for {name}: {problem}")
TOOL_TIMED_OUT = QT_TRANSLATE_NOOP("core", "{name} did not finish within {timeout:g} s and was stopped.")
TOOL_FAILED = QT_TRANSLATE_NOOP("core", "{name} failed: {kind}: {detail}")
TOOL_INVALID_RESULT = QT_TRANSLATE_NOOP("core", "{name} returned an invalid result.")
PATH_MISSING = QT_TRANSLATE_NOOP("core", "{path} does not exist.")
PATH_IS_FOLDER_READ = QT_TRANSLATE_NOOP("core", "{path} is a folder; use fs.list to see what it holds.")
PATH_IS_FOLDER = QT_TRANSLATE_NOOP("core", "{path} is a folder.")
PATH_IS_FILE_LIST = QT_TRANSLATE_NOOP("core", "{path} is a file; use fs.read to read it.")
PATH_NOT_REGULAR = QT_TRANSLATE_NOOP("core", "{path} is not a regular file.")
PATH_BINARY = QT_TRANSLATE_NOOP("core", "{path} is a binary file.")
PATH_NOT_UTF8 = QT_TRANSLATE_NOOP("core", "{path} is not UTF-8 text.")
PATH_UNREADABLE = QT_TRANSLATE_NOOP("core", "{path} cannot be read: {reason}.")
SANDBOX_OUTSIDE = QT_TRANSLATE_NOOP("core", "{path} is outside the folders tools may use.")
SANDBOX_PKG_READ_ONLY = QT_TRANSLATE_NOOP("core", "{path} is in @pkg, which is read-only.")
SANDBOX_PROJECT_FILE = QT_TRANSLATE_NOOP("core", "{path} is the project file; the app manages it, tools may only read it.")
SANDBOX_APP_LOG = QT_TRANSLATE_NOOP("core", "{path} is a log kept by the app (read-only for tools).")
SANDBOX_ABSOLUTE = QT_TRANSLATE_NOOP("core", "{path!r} is absolute; use @project/, @state/ or @pkg/ (or a path relative to the project).")
SANDBOX_DOTDOT = QT_TRANSLATE_NOOP("core", "{path!r}: '..' is not allowed in paths.")
SANDBOX_SYMLINK = QT_TRANSLATE_NOOP("core", "{path!r} resolves outside @{alias} (through a symbolic link).")
SUBAGENTS_UNAVAILABLE = QT_TRANSLATE_NOOP("core", "Subagents are not available in this session.")
SUBAGENT_UNKNOWN_TYPE = QT_TRANSLATE_NOOP("core", "Unknown subagent_type {type!r}. Types: {types}.")
SUBAGENT_SHUTTING_DOWN = QT_TRANSLATE_NOOP("core", "The app is shutting down; no new subagent can start.")
SUBAGENT_NOT_STARTED = QT_TRANSLATE_NOOP("core", "The subagent could not be started: {detail}")
SUBAGENT_CANCELLED = QT_TRANSLATE_NOOP("core", "The subagent was cancelled before it finished ({reason}).")
SUBAGENT_FAILED = QT_TRANSLATE_NOOP("core", "The subagent failed.")
STOP_CANCELLED = QT_TRANSLATE_NOOP("core", "it was cancelled")
STOP_PARENT_STOPPED = QT_TRANSLATE_NOOP("core", "its parent was stopped")
STOP_APP_SHUT_DOWN = QT_TRANSLATE_NOOP("core", "the app shut down")
STOP_BY_USER = QT_TRANSLATE_NOOP("core", "the user stopped it")
WRITE_TOO_LARGE = QT_TRANSLATE_NOOP("core", "The content is {size} bytes; the limit is {limit} bytes. Write smaller files.")
STATE_NOT_YAML = QT_TRANSLATE_NOOP("core", "The state's frontmatter is not valid YAML; nothing was written.")

# -- projects, conversations and the store (errors shown in the window's message bar) -----------------
NOT_A_PROJECT = QT_TRANSLATE_NOOP("core", "{folder} is not a CrewAgent project (it has no .crewagent.json).")
FOLDER_MISSING = QT_TRANSLATE_NOOP("core", "The folder {folder} does not exist.")
PROJECT_IS_FILE = QT_TRANSLATE_NOOP("core", "{folder} is a file, not a folder.")
PROJECT_PATH_EMPTY = QT_TRANSLATE_NOOP("core", "The project path is empty; give the project folder.")
CONVERSATION_NOT_FOUND = QT_TRANSLATE_NOOP("core", "No conversation with id {conversation_id!r} in this project.")
CANNOT_WRITE = QT_TRANSLATE_NOOP("core", "Could not write {path}: {reason}. Nothing already stored was lost.")
CANNOT_READ = QT_TRANSLATE_NOOP("core", "Cannot read {path}: {reason}.")
EXPORT_INVALID = QT_TRANSLATE_NOOP("core", "The exported chain would not be valid; nothing was written.")
EXPORT_CANNOT_WRITE = QT_TRANSLATE_NOOP("core", "Cannot write {path}: {reason}")
EXPORT_EMPTY = QT_TRANSLATE_NOOP("core", "the conversation holds no message a request would carry: the export is []")
REASON_DISK_FULL = QT_TRANSLATE_NOOP("core", "the disk is full (or the file size limit was reached)")
REASON_PERMISSION = QT_TRANSLATE_NOOP("core", "permission denied")
REASON_IS_FOLDER = QT_TRANSLATE_NOOP("core", "it is a folder, not a file")
REASON_NOT_FOLDER = QT_TRANSLATE_NOOP("core", "a part of the path is a file, not a folder")
OUTPUT_MISSING = QT_TRANSLATE_NOOP(
    "core", "The full output of tool result {message_id} is missing ({path}); only its preview remains in the conversation."
)
OUTPUT_CHANGED = QT_TRANSLATE_NOOP(
    "core", "The full output of tool result {message_id} ({path}) does not match its checksum; the file was changed or damaged."
)

# -- workflow runs --------------------------------------------------------------------------------------
NO_RUN = QT_TRANSLATE_NOOP(
    "core",
    "This conversation has no workflow run; start one with Start Workflow in the Workflow header, "
    "`crewagent run --workflow ...` or an agent's workflow menu item.",
)
MENU_WORKFLOW_MISSING = QT_TRANSLATE_NOOP("core", "The package {package} has no workflow {workflow!r} (menu of {agent}).")
RUN_PACKAGE_GONE = QT_TRANSLATE_NOOP("core", "Run {run} needs the package {package}, which is no longer installed; import it again.")
RUN_OTHER_CONVERSATION = QT_TRANSLATE_NOOP("core", "The run {run} belongs to another conversation.")
RUN_COMPLETE = QT_TRANSLATE_NOOP("core", "Run {run} is complete; there is nothing to resume.")
RUN_PROBLEM = QT_TRANSLATE_NOOP("core", "Run {run}: {detail}")
NO_SUCH_WORKFLOW = QT_TRANSLATE_NOOP("core", "The package {package} has no workflow {workflow!r}.")
PACKAGE_NOT_INSTALLED = QT_TRANSLATE_NOOP("core", "No installed package with id {package!r}.")


# -- package validation (the problems listed on Settings → Packages) ------------------------------------
PKG_CLASSIC = QT_TRANSLATE_NOOP(
    "core",
    "a classic BMAD package (workflow.yaml) is not supported: format 1.1 needs bmad.json, "
    "workflow.graph.json, workflow.md and steps/*.md",
)
PKG_NO_MANIFEST = QT_TRANSLATE_NOOP("core", "is missing: a package has bmad.json at its root")
PKG_NOT_UTF8 = QT_TRANSLATE_NOOP("core", "is not UTF-8 text (byte {byte})")
PKG_NOT_JSON = QT_TRANSLATE_NOOP("core", "is not valid JSON: {detail}")
PKG_NO_FRONTMATTER = QT_TRANSLATE_NOOP("core", "has no YAML frontmatter (a '---' block at the top)")
PKG_BAD_PATH = QT_TRANSLATE_NOOP("core", "{value!r} is not a relative path inside the package")
PKG_MISSING_FILE = QT_TRANSLATE_NOOP("core", "the {what} {value!r} is not in the package")
PKG_AGENTS_FILE = QT_TRANSLATE_NOOP("core", "agents file")
PKG_WORKFLOW_FILE = QT_TRANSLATE_NOOP("core", "workflow file")
PKG_GRAPH_FILE = QT_TRANSLATE_NOOP("core", "graph file")
PKG_STEP_MISSING = QT_TRANSLATE_NOOP("core", "the step file {value!r} is not in the package")
PKG_AGENT_TWICE = QT_TRANSLATE_NOOP("core", "the agent id {value!r} is used twice")
PKG_AGENT_UNKNOWN = QT_TRANSLATE_NOOP("core", "the agent {value!r} is not in the package's agents")
PKG_NOT_A_NODE = QT_TRANSLATE_NOOP("core", "{value!r} is not a node of {graph}")
PKG_NODE_TWICE = QT_TRANSLATE_NOOP("core", "the node id {value!r} is used twice")
PKG_ENTRY_UNKNOWN = QT_TRANSLATE_NOOP("core", "the entry node {value!r} is not a node of the graph")
PKG_EDGE_UNKNOWN = QT_TRANSLATE_NOOP("core", "the edge's {end!r} node {value!r} is not a node of the graph")
PKG_TWO_DEFAULTS = QT_TRANSLATE_NOOP("core", "node {value!r} already has a default edge")
PKG_STEP_NODE = QT_TRANSLATE_NOOP("core", "is {value!r} but the graph's node is {node!r}")
PKG_STEP_TYPE = QT_TRANSLATE_NOOP("core", "is {value!r} but the graph says {type!r}")
PKG_STRAY_STEP = QT_TRANSLATE_NOOP("core", "this step file is not the file of any node of the package's graphs")
PKG_WORKFLOW_TWICE = QT_TRANSLATE_NOOP("core", "the workflow id {value!r} is used twice")
PKG_NOT_A_WORKFLOW = QT_TRANSLATE_NOOP("core", "{value!r} is not a workflow of this package")
PKG_AGENT_UNUSABLE = QT_TRANSLATE_NOOP("core", "this app cannot use the agent: {detail}")

# -- the model provider's settings (Settings → Model: Test Connection, Fetch models, validation) ------
CONNECTED = QT_TRANSLATE_NOOP("core", "Connected to {url} ({count} models).")
CONNECTED_MODEL_UNLISTED = QT_TRANSLATE_NOOP("core", "Connected to {url} ({count} models). The model {model!r} is not in the provider's list.")
CONNECT_KEY_REFUSED = QT_TRANSLATE_NOOP("core", "The provider refused the API key: {detail}")
CONNECT_NO_ANSWER = QT_TRANSLATE_NOOP("core", "{url} did not answer in time.")
CONNECT_NOT_OPENAI = QT_TRANSLATE_NOOP("core", "{url} answered, but not like an OpenAI-compatible API.")
CONNECT_NO_MODELS_PATH = QT_TRANSLATE_NOOP("core", "{url}/models does not exist: check the base URL (it usually ends in /v1).")
CONNECT_UNREACHABLE = QT_TRANSLATE_NOOP("core", "Could not reach {url}: {detail}")
MODELS_NOT_LISTED = QT_TRANSLATE_NOOP("core", "{url}/models did not return a model list.")
CONFIG_NEEDS_URL_ENV = QT_TRANSLATE_NOOP("core", "The {provider} provider needs a base URL (settings, or OPENAI_BASE_URL), e.g. {example}.")
CONFIG_NEEDS_URL = QT_TRANSLATE_NOOP("core", "The {provider} provider needs a base URL (Settings), e.g. {example}.")
CONFIG_NEEDS_MODEL = QT_TRANSLATE_NOOP("core", "The {provider} provider needs a model name (settings, or CREWAGENT_MODEL).")
CONFIG_NEEDS_KEY_ENV = QT_TRANSLATE_NOOP("core", "The {provider} provider needs an API key (save it in Settings, or set {variable}).")
CONFIG_NEEDS_KEY = QT_TRANSLATE_NOOP("core", "The {provider} provider needs an API key (save it in Settings).")
SETTINGS_URL_SCHEME = QT_TRANSLATE_NOOP("core", "The base URL must start with http:// or https://.")
SETTINGS_URL_NEEDED = QT_TRANSLATE_NOOP("core", "The {provider} provider needs a base URL, e.g. {example}.")
SETTINGS_MODEL_NEEDED = QT_TRANSLATE_NOOP("core", "Choose or type the model to use.")
SETTINGS_NO_KEY = QT_TRANSLATE_NOOP("core", "The {provider} provider takes no API key.")
DEMO_NOTHING_TO_CONNECT = QT_TRANSLATE_NOOP("core", "The demo provider runs inside CrewAgent; there is nothing to connect to.")
CONNECT_TIMED_OUT = QT_TRANSLATE_NOOP("core", "{url} did not answer within {seconds:.0f} s.")

# Edit and Regenerate (core/message_actions.py)
NOTHING_TO_REGENERATE = QT_TRANSLATE_NOOP("core", "There is no answer to regenerate in this conversation.")
NOT_EDITABLE = QT_TRANSLATE_NOOP(
    "core", "That message can no longer be edited: it is not one of yours on the conversation as it is now."
)
EMPTY_EDIT = QT_TRANSLATE_NOOP("core", "An edited message cannot be empty.")

# Image attachments (core/attachments.py, issue 17 item 4)
IMAGE_PASTED = QT_TRANSLATE_NOOP("core", "the pasted image")
IMAGE_TOO_LARGE = QT_TRANSLATE_NOOP("core", "{name} is {size}; images up to {limit} can be attached.")
IMAGE_NOT_IMAGE = QT_TRANSLATE_NOOP("core", "{name} is not a PNG, JPEG, WebP or GIF image.")
IMAGE_UNREADABLE = QT_TRANSLATE_NOOP("core", "{name} cannot be read: {reason}")
IMAGE_FORGED = QT_TRANSLATE_NOOP("core", "Refused image reference {reference}: not a stored attachment.")
IMAGE_MISSING = QT_TRANSLATE_NOOP("core", "The attached image {reference} is missing.")
IMAGE_CHANGED = QT_TRANSLATE_NOOP("core", "The attached image {reference} was changed after it was attached.")
IMAGE_BAD_DATA_URL = QT_TRANSLATE_NOOP("core", "an image data URL is not valid base64 ({reason}).")
IMAGE_NOT_SENT_NO_VISION = QT_TRANSLATE_NOOP("core", "an image was attached here; the current model does not accept images")
IMAGES_NOT_SUPPORTED = QT_TRANSLATE_NOOP(
    "core",
    "The model {model} does not accept images: choose a model with vision, or remove the images "
    "(a model the app does not know is assumed to accept them; Settings > Context > Images can say otherwise).",
)
IMAGES_WITH_COMMAND = QT_TRANSLATE_NOOP("core", "Images cannot be attached to a command; send them with a message.")


def catalogue() -> dict[str, str]:
    """Every text above by its stable id (the constant's name)."""
    return {name: value for name, value in globals().items() if name.isupper() and name != "CONTEXT" and isinstance(value, str)}
