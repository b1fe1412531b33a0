"""The Worker's answers: its signals, each documented with its arguments."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class WorkerSignals(QObject):
    """What the Worker (:mod:`crewagent.worker.bridge`) emits; every signal carries immutable values
    (:mod:`crewagent.worker.values`) and says what changed, not who asked."""

    #: The recent-projects list, most recent first: ``tuple[RecentProjectEntry, ...]``.
    #: Emitted after ``load_recent_projects`` and after every request that changes the list.
    recent_projects_changed = Signal(object)

    #: A project was opened or created: the ``ProjectRef``. ``conversations_loaded`` follows.
    project_opened = Signal(object)

    #: ``(project_id, tuple[ConversationSummary, ...])``: a project's conversations, most recently
    #: active first.
    conversations_loaded = Signal(str, object)

    #: ``(project_id, ConversationSummary)``: a conversation was created in that project.
    conversation_created = Signal(str, object)

    #: ``(request, message)``: a request failed for a reason the user can act on (a folder that
    #: is not a project, a damaged project file, a full disk). ``request`` is the slot's name;
    #: ``message`` is a complete sentence meant for the user. Nothing was changed.
    error = Signal(str, str)

    # -- settings, agents, Works and Files (see the requests of the same name) -------------------

    #: The settings in force changed (or were loaded): a ``Settings`` copy the receiver owns.
    settings_changed = Signal(object)

    #: ``Settings``: ``save_settings`` saved the changes (after ``settings_changed``): the answer to
    #: that request, as opposed to a change noticed on disk (``refresh_settings``).
    settings_saved = Signal(object)

    #: ``tuple[SettingsProblem, ...]``: ``save_settings`` refused the changes; nothing was saved.
    settings_invalid = Signal(object)

    #: ``ApiKeyState``: whether a provider has a key, and where keys are kept. Never the key.
    api_key_changed = Signal(object)

    #: ``ConnectionReport``: the result of ``test_connection`` (ok, or what is wrong).
    connection_tested = Signal(object)

    #: ``ModelList``: the provider's models (``GET /v1/models``), or why there are none.
    models_listed = Signal(object)

    #: ``tuple[LocalServerFound, ...]``: the answer to ``probe_local_servers`` (empty: none running).
    local_servers_found = Signal(object)

    #: ``tuple[AgentSummary, ...]``: the agents Agent mode offers (built-in ones first).
    agents_loaded = Signal(object)

    #: ``PackagesListing``: the installed workflow packages. Emitted after ``load_packages`` and
    #: after every request that installs or removes a package.
    packages_loaded = Signal(object)

    #: ``PackageImport``: the answer to ``import_package`` (installed, or every problem found).
    #: After an install, ``packages_loaded`` and ``agents_loaded`` follow.
    package_imported = Signal(object)

    #: ``PackageRemoval``: the answer to ``remove_package`` (removed, in use by runs, or failed).
    #: After a removal, ``packages_loaded`` and ``agents_loaded`` follow.
    package_removal = Signal(object)

    #: ``(project_id, ConversationSummary)``: a conversation's metadata changed (e.g. renamed).
    conversation_changed = Signal(str, object)

    #: ``(project_id, conversation_id)``: a conversation and all its files were deleted.
    conversation_deleted = Signal(str, str)

    #: ``(project_id, query, tuple[SearchHit, ...])``: conversations whose messages contain
    #: ``query``. Only the latest query is answered; superseded searches are dropped.
    search_results = Signal(str, str, object)

    #: ``FilePreview``: a project file read for a workspace tab.
    file_read = Signal(object)

    #: ``(path, warnings)``: ``export_conversation`` wrote the file; ``warnings`` is a tuple of
    #: sentences (output that could not be completed, a damaged log), empty when all went well.
    conversation_exported = Signal(str, object)

    #: ``(folder, reason)``: ``open_project(folder)`` found no project there: ``reason`` is
    #: ``"missing"`` (no such folder) or ``"not_a_project"`` (no .crewagent.json yet: the UI may
    #: offer to make it one, with ``create_project``).
    project_unavailable = Signal(str, str)

    #: ``SavedFile``: a text written where the user chose (``save_text``), or why it was not.
    text_saved = Signal(object)

    #: ``LoadedRun``: a conversation's active run for the Run workspace (``load_run``): its snapshot
    #: (steps, decisions, artifacts, tool calls) and its graph laid out; ``snapshot`` None when it has none.
    run_loaded = Signal(object)
