"""The Tools, Context and Appearance pages of the Settings dialog."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from crewagent.core.settings import Settings
from crewagent.ui.i18n import LANGUAGES
from crewagent.ui.settings.form import set_hint
from crewagent.ui.settings.labels import THEMES, theme_label
from crewagent.ui.settings.page import SettingsPage

_MAX_BYTES = 2_000_000_000


def _bytes_box(parent: QWidget) -> QSpinBox:
    box = QSpinBox(parent)
    box.setRange(1, _MAX_BYTES)
    box.setSingleStep(100_000)
    box.setGroupSeparatorShown(True)
    return box


class ToolsPage(SettingsPage):
    """``tools.*``: file-tool limits, the tool timeout and the tools allowed without asking."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._extra_allowed: list[str] = []
        files = self.add_group()
        self.fs_enabled = QCheckBox(files)
        self.max_read = _bytes_box(files)
        self.max_write = _bytes_box(files)
        self.fields["tools.fs.enabled"] = files.add_field(self.fs_enabled)
        self.fields["tools.fs.maxReadBytes"] = files.add_field(self.max_read)
        self.fields["tools.fs.maxWriteBytes"] = files.add_field(self.max_write)
        self._files = files

        runs = self.add_group()
        self.timeout = QDoubleSpinBox(runs)
        self.timeout.setRange(1, 86_400)
        self.timeout.setDecimals(0)
        self.fields["tools.timeoutSeconds"] = runs.add_field(self.timeout)
        self._runs = runs

        approvals = self.add_group()
        self.always_allow = QListWidget(approvals)
        self.always_allow.setObjectName("alwaysAllowList")
        self.always_allow.setMaximumHeight(140)
        self.remove_allowed = QPushButton(approvals)
        self.remove_allowed.setObjectName("dangerButton")
        column = QVBoxLayout()
        column.addWidget(self.always_allow)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.remove_allowed)
        column.addLayout(buttons)
        self.fields["tools.alwaysAllow"] = approvals.add_field(column, wrapped=self.always_allow)
        self._approvals = approvals
        self.finish()

        self.remove_allowed.clicked.connect(self._remove_selected)
        self.always_allow.itemSelectionChanged.connect(self._update_buttons)
        self.fs_enabled.toggled.connect(self._update_buttons)
        self.retranslate_ui()

    def nav_title(self) -> str:
        return self.tr("Tools")

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("Tools"))
        self.intro.setText(self.tr("What the model may do in your project. Tools can only read and write inside the project and its state folder."))
        self._files.title.setText(self.tr("Files"))
        self.fs_enabled.setText(self.tr("Let the model read and write project files"))
        self.fields["tools.fs.enabled"].label.setText(self.tr("File tools"))
        self.fields["tools.fs.maxReadBytes"].label.setText(self.tr("Largest read"))
        self.fields["tools.fs.maxWriteBytes"].label.setText(self.tr("Largest write"))
        for box in (self.max_read, self.max_write):
            box.setSuffix(self.tr(" bytes"))
        self._runs.title.setText(self.tr("Running"))
        self.fields["tools.timeoutSeconds"].label.setText(self.tr("Tool timeout"))
        self.timeout.setSuffix(self.tr(" s"))
        self._approvals.title.setText(self.tr("Approvals"))
        self.fields["tools.alwaysAllow"].label.setText(self.tr("Always allowed"))
        set_hint(self.fields["tools.alwaysAllow"], self.tr("Tools you chose “Always allow” for run without asking. Remove one to be asked again."))
        self.remove_allowed.setText(self.tr("Remove"))
        self._update_buttons()

    def load(self, settings: Settings) -> None:
        tools = settings.tools
        self.fs_enabled.setChecked(tools.fs.enabled)
        self.max_read.setValue(min(tools.fs.maxReadBytes, _MAX_BYTES))
        self.max_write.setValue(min(tools.fs.maxWriteBytes, _MAX_BYTES))
        self.timeout.setValue(tools.timeoutSeconds)
        self.always_allow.clear()
        self.always_allow.addItems(tools.alwaysAllow)
        self._update_buttons()

    def changes(self) -> dict[str, Any]:
        allowed = [self.always_allow.item(row).text() for row in range(self.always_allow.count())]
        return {
            "tools": {
                "fs": {
                    "enabled": self.fs_enabled.isChecked(),
                    "maxReadBytes": self.max_read.value(),
                    "maxWriteBytes": self.max_write.value(),
                },
                "timeoutSeconds": self.timeout.value(),
                "alwaysAllow": allowed,
            }
        }

    @Slot()
    def _remove_selected(self) -> None:
        for item in self.always_allow.selectedItems():
            self.always_allow.takeItem(self.always_allow.row(item))
        self._update_buttons()

    @Slot()
    def _update_buttons(self) -> None:
        self.remove_allowed.setEnabled(bool(self.always_allow.selectedItems()))
        for name in ("tools.fs.maxReadBytes", "tools.fs.maxWriteBytes"):
            self.fields[name].set_enabled(self.fs_enabled.isChecked())
        if not self.always_allow.count():
            self.always_allow.setToolTip(self.tr("No tool is always allowed."))
        else:
            self.always_allow.setToolTip("")


class ContextPage(SettingsPage):
    """``llm.context*``: how much history goes into each request."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        budgets = self.add_group()
        self.max_messages = QSpinBox(budgets)
        self.max_messages.setRange(1, 100_000)
        self.max_chars = QSpinBox(budgets)
        self.max_chars.setRange(1, 100_000_000)
        self.max_chars.setSingleStep(10_000)
        self.max_chars.setGroupSeparatorShown(True)
        self.max_tokens = QSpinBox(budgets)
        self.max_tokens.setRange(0, 10_000_000)
        self.max_tokens.setSingleStep(1024)
        self.max_tokens.setGroupSeparatorShown(True)
        self.include_tool_results = QCheckBox(budgets)
        self.fields["llm.contextMaxMessages"] = budgets.add_field(self.max_messages)
        self.fields["llm.contextMaxChars"] = budgets.add_field(self.max_chars)
        self.fields["llm.contextMaxTokens"] = budgets.add_field(self.max_tokens)
        self.fields["llm.includeToolResultsInContext"] = budgets.add_field(self.include_tool_results)
        self._budgets = budgets
        #: ``llm.vision`` (issue 17): whether images are sent to the model; None: the model table.
        self.vision = QComboBox(budgets)
        self.vision.setObjectName("visionCombo")
        for value in (None, True, False):
            self.vision.addItem("", value)
        self.fields["llm.vision"] = budgets.add_field(self.vision)
        self.finish()
        self.retranslate_ui()

    def nav_title(self) -> str:
        return self.tr("Context")

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("Context"))
        self.intro.setText(
            self.tr("Each request carries the system prompt and as much recent history as fits these budgets; older messages are summarised or left out.")
        )
        self._budgets.title.setText(self.tr("Budgets per request"))
        self.fields["llm.contextMaxMessages"].label.setText(self.tr("Messages"))
        self.max_messages.setSuffix(self.tr(" messages"))
        self.fields["llm.contextMaxChars"].label.setText(self.tr("Characters"))
        self.max_chars.setSuffix(self.tr(" characters"))
        self.fields["llm.contextMaxTokens"].label.setText(self.tr("Tokens"))
        self.max_tokens.setSuffix(self.tr(" tokens"))
        self.max_tokens.setSpecialValueText(self.tr("No limit"))
        set_hint(
            self.fields["llm.contextMaxTokens"],
            self.tr("An upper limit per request, below the model's context window (set the window on the Model page)."),
        )
        self.fields["llm.includeToolResultsInContext"].label.setText(self.tr("Tool results"))
        self.include_tool_results.setText(self.tr("Send earlier tool results back to the model"))
        self.fields["llm.vision"].label.setText(self.tr("Images"))
        self.vision.setItemText(0, self.tr("As the model table says (a model it does not list: sent)"))
        self.vision.setItemText(1, self.tr("The model accepts images"))
        self.vision.setItemText(2, self.tr("The model does not accept images"))

    def load(self, settings: Settings) -> None:
        llm = settings.llm
        self.max_messages.setValue(llm.contextMaxMessages)
        self.max_chars.setValue(llm.contextMaxChars)
        self.max_tokens.setValue(llm.contextMaxTokens or 0)
        self.include_tool_results.setChecked(llm.includeToolResultsInContext)
        self.vision.setCurrentIndex(self.vision.findData(llm.vision) if llm.vision is not None else 0)

    def changes(self) -> dict[str, Any]:
        tokens = self.max_tokens.value()
        return {
            "llm": {
                "contextMaxMessages": self.max_messages.value(),
                "contextMaxChars": self.max_chars.value(),
                "contextMaxTokens": tokens or None,
                "includeToolResultsInContext": self.include_tool_results.isChecked(),
                "vision": self.vision.currentData(),
            }
        }


class AppearancePage(SettingsPage):
    """``appearance.*``: theme and language, saved and applied as soon as the user picks one."""

    #: The user picked a theme or a language (not emitted by ``load``): apply it now.
    chosen = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        look = self.add_group()
        self.theme = QComboBox(look)
        for name in THEMES:
            self.theme.addItem(theme_label(name), name)
        self.language = QComboBox(look)
        for code, name in LANGUAGES.items():
            self.language.addItem(name, code)  # each language in its own words, never translated
        self.fields["appearance.theme"] = look.add_field(self.theme)
        self.fields["appearance.language"] = look.add_field(self.language)
        self._look = look
        self.finish()
        self.theme.activated.connect(self.chosen)
        self.language.activated.connect(self.chosen)
        self.retranslate_ui()

    def nav_title(self) -> str:
        return self.tr("Appearance")

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("Appearance"))
        self.intro.setText(self.tr("Changes apply at once, without a restart."))
        self._look.title.setText(self.tr("Look and language"))
        self.fields["appearance.theme"].label.setText(self.tr("Theme"))
        self.fields["appearance.language"].label.setText(self.tr("Language"))
        for row, name in enumerate(THEMES):
            self.theme.setItemText(row, theme_label(name))

    def load(self, settings: Settings) -> None:
        self.theme.setCurrentIndex(max(0, self.theme.findData(settings.appearance.theme)))
        self.language.setCurrentIndex(max(0, self.language.findData(settings.appearance.language)))

    def changes(self) -> dict[str, Any]:
        return {"appearance": {"theme": str(self.theme.currentData()), "language": str(self.language.currentData())}}
