"""The model picker in the conversation header (as in Jan or LM Studio): the model of the next turn.

It shows the model in the settings and, when opened, the provider's list (``GET /v1/models``,
asked of the worker only then, never at start). Picking one saves ``llm.model`` through the
worker, so the next turn (and the Settings page) use it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QWidget

from crewagent.core.context.window import DEMO_MODEL
from crewagent.core.settings import Settings
from crewagent.ui.core_texts import translate_core
from crewagent.worker import Worker
from crewagent.worker.values import LlmDraft, ModelList


class ModelPicker(QComboBox):
    """A combo box of the active provider's models; the user's pick becomes ``llm.model``."""

    #: ``LlmDraft``: list the active provider's models (``Worker.list_models``).
    models_requested = Signal(object)

    #: ``{"llm": {"model": id}}``: save the model the user picked (``Worker.save_settings``).
    model_chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("modelPicker")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setMinimumContentsLength(12)
        self._draft: LlmDraft | None = None
        self._listed_for: LlmDraft | None = None  # the draft whose list is shown (None: none yet)
        self.activated.connect(self._on_activated)
        self.retranslate_ui()
        self.hide()  # until the settings say which provider is active

    def retranslate_ui(self) -> None:
        self.setToolTip(self.tr("Model for the next message"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    @Slot(object)
    def set_settings(self, settings: Settings) -> None:
        llm = settings.llm
        demo = llm.provider == "demo"
        draft = LlmDraft(llm.provider, llm.baseUrl, llm.model, llm.timeoutSeconds)
        if self._listed_for is not None and (self._listed_for.provider, self._listed_for.base_url) != (draft.provider, draft.base_url):
            self._listed_for = None  # another provider: its list is asked again when opened
        self._draft = draft
        models = [self.itemText(row) for row in range(self.count())] if self._listed_for is not None else []
        self._fill(models, DEMO_MODEL if demo else llm.model)
        self.setEnabled(not demo)
        self.show()

    @Slot(object)
    def set_model_list(self, listed: ModelList) -> None:
        draft = self._draft
        if draft is None or listed.provider != draft.provider or listed.error:
            if listed.error and draft is not None and listed.provider == draft.provider:
                self.setToolTip(self.tr("The provider's model list could not be read: {error}").format(error=translate_core(listed.error)))
            return
        self._listed_for = draft
        self._fill(list(listed.models), self.currentText())
        self.retranslate_ui()

    def showPopup(self) -> None:
        if self._draft is not None and self._listed_for is None and self._draft.provider != "demo":
            self.models_requested.emit(self._draft)
        super().showPopup()

    def _fill(self, models: list[str], current: str) -> None:
        self.blockSignals(True)
        self.clear()
        self.addItems(models if current in models or not current else [current, *models])
        self.setCurrentIndex(max(0, self.findText(current)))
        self.blockSignals(False)

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        chosen = self.itemText(index)
        if self._draft is not None and chosen and chosen != self._draft.model:
            self.model_chosen.emit({"llm": {"model": chosen}})


def connect_model_picker(picker: ModelPicker, worker: Worker) -> None:
    """Wire the picker to the worker: queued requests, results back on the GUI thread."""
    queued = Qt.ConnectionType.QueuedConnection
    picker.models_requested.connect(worker.list_models, queued)
    picker.model_chosen.connect(worker.save_settings, queued)
    worker.models_listed.connect(picker.set_model_list)
    worker.settings_changed.connect(picker.set_settings)

