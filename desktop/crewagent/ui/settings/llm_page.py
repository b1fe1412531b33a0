"""The LLM page: provider, base URL, model (from /v1/models), API key, timeout, context window, Test Connection."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QWidget,
)

from crewagent.core.context.window import DEMO_MODEL, ContextWindow, resolve_window
from crewagent.core.settings import LlmSettings, ProviderProfile, Settings
from crewagent.ui.core_texts import translate_core
from crewagent.ui.settings.form import Field, Group, set_hint
from crewagent.ui.settings.labels import PROVIDERS, provider_label
from crewagent.ui.settings.page import SettingsPage
from crewagent.worker.values import ApiKeyState, ConnectionReport, LlmDraft, ModelList

#: How long the page waits for an answer before it gives up on a check (the worker bounds its own
#: wait at 20 s; this only guards against an answer that never comes).
CHECK_TIMEOUT_MS = 30_000
#: The context window spin box's value for "automatic" (the provider's list, else known models).
AUTOMATIC_WINDOW = 0


class LlmPage(SettingsPage):
    """Edits ``llm.*``; the API key is sent to the worker on its own and never kept in settings."""

    #: ``LlmDraft``: test the connection described by the fields as typed.
    connection_test_requested = Signal(object)

    #: ``LlmDraft``: fetch the provider's models (``GET /v1/models``).
    models_requested = Signal(object)

    #: ``provider``: the key state of this provider is wanted (the provider choice changed).
    key_state_requested = Signal(str)

    #: ``(provider, "")``: remove the stored key of that provider.
    key_removal_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._key_state: ApiKeyState | None = None
        self._busy: str = ""  # "", "test" or "models"
        self._refocus: QPushButton | None = None
        #: Model id -> the window the provider's last model list reported (this base URL).
        self._reported: dict[str, int] = {}
        #: Each provider's base URL and model as last shown, so a switch restores the provider's own.
        self._llm = LlmSettings()
        self._profiles: dict[str, ProviderProfile] = {}
        self._shown: str = "demo"

        provider_group = self.add_group()
        self.provider = QComboBox(provider_group)
        for name in PROVIDERS:
            self.provider.addItem(provider_label(name), name)
        self.base_url = QLineEdit(provider_group)
        self.base_url.setClearButtonEnabled(True)
        self.model = QComboBox(provider_group)
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.fetch_models = QPushButton(provider_group)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.fetch_models)
        self.api_key = QLineEdit(provider_group)
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setClearButtonEnabled(True)
        self.remove_key = QPushButton(provider_group)
        self.remove_key.setObjectName("linkButton")
        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key, 1)
        key_row.addWidget(self.remove_key)
        self.key_warning = QLabel(provider_group)
        self.key_warning.setObjectName("keyWarning")
        self.key_warning.setWordWrap(True)
        self.key_warning.hide()

        self.fields["llm.provider"] = provider_group.add_field(self.provider)
        self.fields["llm.baseUrl"] = provider_group.add_field(self.base_url)
        self.fields["llm.model"] = provider_group.add_field(model_row, wrapped=self.model)
        self.fields["llm.apiKey"] = provider_group.add_field(key_row, wrapped=self.api_key)
        provider_group.add_wide(self.key_warning)
        self._provider_group = provider_group

        self._check_group, self.test_button, self.busy, self.result = _check_group(self.add_group())
        self._limits_group, self.timeout, self.context_window, self.window_info = _limits_group(self.add_group(), self.fields)

        self.finish()

        self._timeout = QTimer(self)
        self._timeout.setSingleShot(True)
        self._timeout.setInterval(CHECK_TIMEOUT_MS)
        self._timeout.timeout.connect(self._on_check_timeout)

        self.provider.currentIndexChanged.connect(self._on_provider_changed)
        self.model.currentTextChanged.connect(self._show_window)
        self.context_window.valueChanged.connect(self._show_window)
        self.base_url.textEdited.connect(self._forget_reported)
        self.test_button.clicked.connect(self.request_test)
        self.fetch_models.clicked.connect(self.request_models)
        self.remove_key.clicked.connect(self._remove_key)
        self.retranslate_ui()
        self._update_for_provider()

    # -- SettingsPage ------------------------------------------------------------------------

    def nav_title(self) -> str:
        return self.tr("Model")

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("Model provider"))
        self.intro.setText(
            self.tr("Where CrewAgent sends your conversations. The demo works offline with no setup; connect a real model with OpenAI or any OpenAI-compatible server (Ollama, LM Studio, vLLM…).")
        )
        for row, name in enumerate(PROVIDERS):
            self.provider.setItemText(row, provider_label(name))
        self._provider_group.title.setText(self.tr("Connection"))
        self.fields["llm.provider"].label.setText(self.tr("Provider"))
        self.fields["llm.baseUrl"].label.setText(self.tr("Base URL"))
        self.fields["llm.model"].label.setText(self.tr("Model"))
        self.fields["llm.apiKey"].label.setText(self.tr("API key"))
        self.fetch_models.setText(self.tr("Fetch models"))
        self.fetch_models.setToolTip(self.tr("List the models the provider offers (GET /v1/models)"))
        self.remove_key.setText(self.tr("Remove key"))
        self._limits_group.title.setText(self.tr("Limits"))
        self.fields["llm.timeoutSeconds"].label.setText(self.tr("Timeout"))
        self.timeout.setSuffix(self.tr(" s"))
        set_hint(self.fields["llm.timeoutSeconds"], self.tr("The longest wait for the first byte and between two streamed chunks."))
        self.fields["llm.contextWindow"].label.setText(self.tr("Context window"))
        self.context_window.setSpecialValueText(self.tr("Automatic"))
        self.context_window.setSuffix(self.tr(" tokens"))
        set_hint(
            self.fields["llm.contextWindow"],
            self.tr("Leave on Automatic to use what the provider reports or the known size of the model. Each request gets the window minus room for the answer."),
        )
        self._check_group.title.setText(self.tr("Check"))
        self.test_button.setText(self.tr("Test Connection"))
        self._update_for_provider()
        self._show_key_state()
        self._show_window()

    def load(self, settings: Settings) -> None:
        llm = settings.llm
        self._llm = llm
        index = self.provider.findData(llm.provider)
        self.provider.setCurrentIndex(max(0, index))
        self._profiles = {}  # what the switch above kept came from the page's previous settings
        self._shown = self.current_provider()
        self._show_profile(llm.profile(self._shown))
        self.timeout.setValue(llm.timeoutSeconds)
        self.context_window.setValue(llm.contextWindow or AUTOMATIC_WINDOW)
        self._reported = {}
        self.api_key.clear()
        self._clear_result()
        self._update_for_provider()

    def changes(self) -> dict[str, Any]:
        window = self.context_window.value()
        self._keep_profile()
        # Only what differs from the saved settings: the active provider's own are the top-level
        # fields, and the provider that was active keeps its URL and model when another takes over.
        current = self.current_provider()
        providers = {
            name: profile.model_dump(mode="json")
            for name, profile in self._profiles.items()
            if name != current and (name == self._llm.provider or profile != self._llm.profile(name))
        }
        return {
            "llm": {
                "provider": self.current_provider(),
                "baseUrl": self.base_url.text().strip(),
                "model": self.model.currentText().strip(),
                "providers": providers,
                "timeoutSeconds": self.timeout.value(),
                "contextWindow": window if window != AUTOMATIC_WINDOW else None,
            }
        }

    # -- context window ----------------------------------------------------------------------

    def resolved_window(self) -> ContextWindow:
        """The window a turn would use with the fields as typed (the same rules as the tool loop)."""
        model = self.model.currentText().strip()
        if self.current_provider() == "demo":
            model = DEMO_MODEL
        setting = self.context_window.value() or None
        return resolve_window(model, setting=setting, reported=self._reported.get(model))

    @Slot()
    def _show_window(self) -> None:
        window = self.resolved_window()
        sources = {
            "setting": self.tr("your setting"),
            "provider": self.tr("from the provider"),
            "known": self.tr("known model {model}").format(model=window.known_as),
            "default": self.tr("default for unknown models"),
        }
        self.window_info.setText(
            self.tr("Context window: {tokens} tokens ({source})").format(tokens=f"{window.tokens:,}", source=sources[window.source])
        )

    @Slot()
    def _forget_reported(self) -> None:
        self._reported = {}
        self._show_window()

    def _remember_reported(self, windows: tuple[tuple[str, int], ...]) -> None:
        self._reported = dict(windows)
        self._show_window()

    # -- API key -----------------------------------------------------------------------------

    def current_provider(self) -> str:
        return str(self.provider.currentData())

    def typed_key(self) -> str:
        """A key the user typed (to be stored on Apply), or ""."""
        return self.api_key.text().strip() if self.current_provider() != "demo" else ""

    @Slot(object)
    def set_key_state(self, state: ApiKeyState) -> None:
        if state.provider != self.current_provider():
            return
        self._key_state = state
        self.api_key.clear()
        self._show_key_state()

    def _show_key_state(self) -> None:
        state = self._key_state
        keyed = self.current_provider() != "demo"
        stored = bool(state and state.is_set and state.provider == self.current_provider())
        self.remove_key.setVisible(keyed and stored)
        if not keyed:
            self.api_key.setPlaceholderText(self.tr("Not needed"))
        elif stored:
            self.api_key.setPlaceholderText(self.tr("A key is stored; type a new one to replace it"))
        else:
            self.api_key.setPlaceholderText(self.tr("Paste your API key (e.g. sk-…)"))
        if state is not None and keyed:
            where = self.tr("Keys are kept in the system keyring ({backend}), never in settings.json.").format(backend=state.backend)
            set_hint(self.fields["llm.apiKey"], where if state.secure else "")
            self.key_warning.setText(
                self.tr("No system keyring is available: the key is stored in a file only you can read, but it is not encrypted.")
                if not state.secure
                else ""
            )
            self.key_warning.setVisible(not state.secure)
        else:
            set_hint(self.fields["llm.apiKey"], "")
            self.key_warning.hide()

    @Slot()
    def _remove_key(self) -> None:
        self.key_removal_requested.emit(self.current_provider(), "")

    # -- provider-dependent fields -----------------------------------------------------------

    def _keep_profile(self) -> None:
        self._profiles[self._shown] = ProviderProfile(baseUrl=self.base_url.text().strip(), model=self.model.currentText().strip())

    def _show_profile(self, profile: ProviderProfile) -> None:
        self.base_url.setText(profile.baseUrl)
        self.model.setEditText(profile.model)

    @Slot(int)
    def _on_provider_changed(self, _index: int) -> None:
        # Item 7 of issue 18: each provider keeps its own base URL and model.
        self._keep_profile()
        self._shown = self.current_provider()
        self._show_profile(self._profiles.get(self._shown) or self._llm.profile(self._shown))
        self._key_state = None
        self._reported = {}
        self._clear_result()
        self.clear_problems()
        self._update_for_provider()
        self._show_key_state()
        self._show_window()
        self.key_state_requested.emit(self.current_provider())

    def _update_for_provider(self) -> None:
        provider = self.current_provider()
        demo = provider == "demo"
        for name in ("llm.baseUrl", "llm.model", "llm.apiKey"):
            self.fields[name].set_enabled(not demo)
        self.fetch_models.setEnabled(not demo and not self._busy)
        model_line = self.model.lineEdit()
        assert model_line is not None  # the model box is editable
        if demo:
            set_hint(self.fields["llm.provider"], self.tr("A scripted model inside CrewAgent: no network, no key, always the same answers. Good for trying the app."))
            self.base_url.setPlaceholderText("")
            model_line.setPlaceholderText("")
        elif provider == "openai":
            set_hint(self.fields["llm.provider"], "")
            self.base_url.setPlaceholderText(self.tr("https://api.openai.com/v1 (leave empty for the default)"))
            model_line.setPlaceholderText("gpt-4o-mini")
        else:
            set_hint(self.fields["llm.provider"], self.tr("Any server that speaks the OpenAI chat API."))
            self.base_url.setPlaceholderText("http://localhost:11434/v1")
            model_line.setPlaceholderText(self.tr("e.g. llama3.1"))

    # -- network checks ----------------------------------------------------------------------

    def draft(self) -> LlmDraft:
        return LlmDraft(
            provider=self.current_provider(),
            base_url=self.base_url.text().strip(),
            model=self.model.currentText().strip(),
            timeout_seconds=self.timeout.value(),
            api_key=self.typed_key(),
        )

    @property
    def busy_with(self) -> str:
        """``test`` or ``models`` while a check runs, else ""."""
        return self._busy

    @Slot()
    def request_test(self) -> None:
        self._start("test", self.tr("Connecting…"))
        self.connection_test_requested.emit(self.draft())

    @Slot()
    def request_models(self) -> None:
        self._start("models", self.tr("Fetching the model list…"))
        self.models_requested.emit(self.draft())

    def _start(self, kind: str, text: str) -> None:
        self._busy = kind
        # Disabling the focused button would hand the focus on to the next field (Timeout, its
        # text selected, so the next keystroke replaces it): park it on the page, give it back after.
        focused = self.window().focusWidget()
        self._refocus = next((button for button in (self.test_button, self.fetch_models) if button is focused), None)
        if self._refocus is not None:
            self.setFocus(Qt.FocusReason.OtherFocusReason)
        self.test_button.setEnabled(False)
        self.fetch_models.setEnabled(False)
        self.busy.show()
        self._show_result("resultBusy", text)
        self._timeout.start()

    def _finish(self) -> None:
        self._busy = ""
        self._timeout.stop()
        self.busy.hide()
        self.test_button.setEnabled(True)
        self._update_for_provider()
        if self._refocus is not None and self.window().focusWidget() is self and self._refocus.isEnabled():
            self._refocus.setFocus(Qt.FocusReason.OtherFocusReason)
        self._refocus = None

    @Slot(object)
    def show_connection_report(self, report: ConnectionReport) -> None:
        if self._busy != "test":
            return  # an answer to a check the user has moved on from
        self._finish()
        if report.ok:
            latency = f" · {report.latency_ms:.0f} ms" if report.latency_ms else ""
            self._show_result("resultOk", "✓ " + self.tr("Connected.") + " " + translate_core(report.message) + latency)
            if report.models:
                self._fill_models(report.models)
            self._remember_reported(report.windows)
        else:
            titles = {
                "auth_failed": self.tr("The API key was refused."),
                "unreachable": self.tr("The server could not be reached."),
                "timeout": self.tr("The server did not answer in time."),
                "not_found": self.tr("Wrong base URL."),
                "invalid": self.tr("The settings are incomplete."),
            }
            title = titles.get(report.status, self.tr("The connection failed."))
            self._show_result("resultError", "✕ " + title + " " + translate_core(report.message))

    @Slot(object)
    def set_model_list(self, listed: ModelList) -> None:
        if self._busy != "models":
            return
        self._finish()
        if listed.error:
            self._show_result("resultError", "✕ " + self.tr("No model list: {error}").format(error=translate_core(listed.error)))
            return
        self._fill_models(listed.models)
        self._remember_reported(listed.windows)
        self._show_result("resultOk", self.tr("{count} models available.").format(count=len(listed.models)))

    def _fill_models(self, models: tuple[str, ...]) -> None:
        typed = self.model.currentText()
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItems(list(models))
        self.model.setEditText(typed or (models[0] if models else ""))
        self.model.blockSignals(False)

    @Slot()
    def _on_check_timeout(self) -> None:
        self._finish()
        self._show_result("resultError", "✕ " + self.tr("No answer. Check the base URL and your network, then try again."))

    def _show_result(self, kind: str, text: str) -> None:
        self.result.setObjectName(kind)
        self.result.setText(text)
        self.result.style().unpolish(self.result)
        self.result.style().polish(self.result)
        self.result.show()

    def _clear_result(self) -> None:
        if not self._busy:
            self.result.hide()


def _check_group(group: Group) -> tuple[Group, QPushButton, QProgressBar, QLabel]:
    """Test Connection, its busy bar and its result, in ``group``."""
    test_button = QPushButton(group)
    test_button.setObjectName("primaryButton")
    busy = QProgressBar(group)
    busy.setRange(0, 0)  # indeterminate
    busy.setTextVisible(False)
    busy.setFixedHeight(4)
    busy.hide()
    result = QLabel(group)
    result.setWordWrap(True)
    result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    result.hide()
    test_row = QHBoxLayout()
    test_row.addWidget(test_button)
    test_row.addStretch(1)
    holder = QWidget(group)
    holder.setLayout(test_row)
    group.add_wide(holder)
    group.add_wide(busy)
    group.add_wide(result)
    return group, test_button, busy, result


def _limits_group(group: Group, fields: dict[str, Field]) -> tuple[Group, QDoubleSpinBox, QSpinBox, QLabel]:
    """The timeout and the context window, in ``group`` (their fields added to ``fields``)."""
    timeout = QDoubleSpinBox(group)
    timeout.setRange(1, 3600)
    timeout.setDecimals(0)
    context_window = QSpinBox(group)
    context_window.setRange(AUTOMATIC_WINDOW, 100_000_000)
    context_window.setSingleStep(1024)
    context_window.setGroupSeparatorShown(True)
    window_info = QLabel(group)
    window_info.setObjectName("windowInfo")
    window_info.setWordWrap(True)
    fields["llm.timeoutSeconds"] = group.add_field(timeout)
    fields["llm.contextWindow"] = group.add_field(context_window)
    group.add_wide(window_info)
    return group, timeout, context_window, window_info
