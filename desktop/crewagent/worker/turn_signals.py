"""The TurnWorker's reports: its signals, each documented with its arguments."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class TurnSignals(QObject):
    """What the TurnWorker reports; every signal carries immutable values (worker.turn_values).

    ``send`` routes the text first (core.routing): a global command answers with ``command_done``,
    Agent mode's menu with ``agent_menu``; else a turn runs. A turn reports, in order:
    ``turn_started``; per model call ``context_usage``, ``stream_started``,
    ``stream_chunk``/``reasoning_chunk``, ``stream_ended``; ``message_persisted`` for every message
    written to the log; per tool call ``tool_started`` and ``tool_finished``; and always exactly
    one ``turn_finished``. Subagents outlive their parent's turn: ``subagent_status_changed``,
    ``subagent_message_persisted`` / ``subagent_progress`` while they run, ``subagent_notice``
    when a finished background child's notice was appended.
    """

    #: A :class:`LoadedConversation`: a conversation opened for the timeline.
    conversation_loaded = Signal(object)
    #: ``(conversation_id, mode)``: a turn began; the conversation is busy until ``turn_finished``.
    turn_started = Signal(str, str)
    #: ``(conversation_id, step, model)``: a model answer starts streaming (step counts calls, 1-based).
    stream_started = Signal(str, int, str)
    #: ``(conversation_id, text)``: more of the streaming answer.
    stream_chunk = Signal(str, str)
    #: ``(conversation_id, text)``: more of the streaming answer's reasoning.
    reasoning_chunk = Signal(str, str)
    #: ``(conversation_id)``: the answer stopped streaming; its stored form follows (if any).
    stream_ended = Signal(str)
    #: ``(conversation_id, ToolCallRef)``: a tool call began running.
    tool_started = Signal(str, object)
    #: ``(conversation_id, ToolFinish)``: a tool call ended; its result message follows.
    tool_finished = Signal(str, object)
    #: ``(conversation_id, ToolOutputChunk)``: live output of a running command (between started and finished).
    tool_output = Signal(str, object)
    #: ``(conversation_id, TimelineMessage)``: a message is durable in the log.
    message_persisted = Signal(str, object)
    #: ``(conversation_id, RunProgress)``: Run mode wrote the run's state and re-read it (the node
    #: the run is on, the steps completed, whether it is complete); the Run workspace follows it.
    run_progress = Signal(str, object)
    #: ``(conversation_id, ContextUsage)``: how full the next model call's context is.
    context_usage = Signal(str, object)
    #: ``(conversation_id, reason, error)``: the turn is over; reason is completed, stopped, error or
    #: waiting_user; ``error`` is the ``{code, message}`` mapping of a failure or None.
    turn_finished = Signal(str, str, object)
    #: ``(project_id, ConversationSummary)``: a conversation's title, mode, count or activity changed.
    conversation_changed = Signal(str, object)
    #: ``(project_id, ConversationSummary)``: an opened conversation's entry as its log holds it (the
    #: count a kill left behind, reconciled): updates a shown row, never adds one (it may be deleted by now).
    conversation_counted = Signal(str, object)
    #: ``(conversation_id, title_source)``: naming the conversation after its first exchange is over
    #: (``generated``; ``auto``: the first message's title is kept; ``user``: a rename won; "" unknown).
    title_finished = Signal(str, str)
    #: An :class:`ApprovalPrompt`: a write tool waits; answer with ``answer_approval``.
    approval_requested = Signal(object)
    #: An :class:`AskUserPrompt`: ``ui.ask_user`` waits; answer with ``answer_ask_user``.
    ask_user_requested = Signal(object)
    #: ``(request_id)``: a question is no longer waiting (its turn was stopped); close it.
    prompt_withdrawn = Signal(str)
    #: A :class:`FullOutput`: the complete content of an offloaded tool result.
    full_output_loaded = Signal(object)
    #: A :class:`~crewagent.worker.tool_images.ToolImages`: the thumbnails of an MCP tool part's images.
    tool_images_loaded = Signal(object)
    #: An :class:`AgentMenu`: Agent-mode input showed the agent's menu instead of starting a turn.
    agent_menu = Signal(object)
    #: ``(conversation_id, command, message)``: a global command was handled without a turn.
    command_done = Signal(str, str, str)
    #: A :class:`ProviderInfo`: the provider and model the next turn uses.
    provider_changed = Signal(object)
    #: A :class:`SubagentInfo`: a subagent started or ended.
    subagent_status_changed = Signal(object)
    #: ``(conversation_id, session_id, TimelineMessage)``: a subagent's message is durable in its sidechain.
    subagent_message_persisted = Signal(str, str, object)
    #: ``(session_id, SubagentProgress)``: a running subagent streams or runs a tool.
    subagent_progress = Signal(str, object)
    #: ``(conversation_id, TimelineMessage)``: a finished background subagent's notice was appended.
    subagent_notice = Signal(str, object)
    #: A :class:`LoadedSubagent`: a sidechain opened for its read-only tab.
    subagent_loaded = Signal(object)
    #: A :class:`ConversationRuns` (worker.values): the runs started in a conversation, with their
    #: phase; answers ``load_runs``, and ``start_run`` / ``resume_run`` before their turn.
    runs_loaded = Signal(object)
    #: ``(conversation_id, RunProgress)``: a Run-mode turn wrote the run's state (the core event:
    #: ``run_id``, ``current_node_id``, ``steps_completed``, ``complete``; frozen).
    run_progress = Signal(str, object)
    #: A ``ServerState`` (core.mcp): an MCP server the turns use starts, runs (with its tools), fails or stops.
    mcp_state_changed = Signal(object)
    #: An :class:`~crewagent.worker.mcp_ops.McpLog`: the stderr log of a server the turns started (``read_mcp_log``).
    mcp_log_read = Signal(object)
    #: A :class:`TurnError`: a request failed for a reason the user can act on (no provider, the
    #: conversation is busy, a full disk), or a bug was reported; it names its conversation.
    error = Signal(object)
