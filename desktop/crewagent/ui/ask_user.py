"""The inline form of a waiting ``ui.ask_user`` call (form, selection, confirmation) and its answer.

While the question waits, the timeline opens this widget as the persistent editor of the tool
part's row; once submitted (or dismissed) the editor closes and the row is drawn read-only by the
delegate from :func:`answer_lines`. The submitted payload is the ``WIDGET_SUBMIT`` message:
``{"type": "WIDGET_SUBMIT", "widgetType": ..., "values": {...}}`` for a form,
``..., "selected": value or [values]`` for a selection, ``..., "confirmed": bool`` for a
confirmation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, Signal, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

SUBMIT = "WIDGET_SUBMIT"


def _options(widget: Mapping[str, Any], key: str = "options") -> list[tuple[str, str]]:
    """(value, label) pairs; plain strings are accepted as options, as the tool does."""
    out: list[tuple[str, str]] = []
    for option in widget.get(key) or ():
        if isinstance(option, str):
            out.append((option, option))
        elif isinstance(option, Mapping) and option.get("value"):
            out.append((str(option["value"]), str(option.get("label") or option["value"])))
    return out


class AskUserForm(QFrame):
    """Renders one widget; emits ``submitted(payload)`` once, or ``dismissed()``."""

    #: The WIDGET_SUBMIT payload (a dict the receiver owns).
    submitted = Signal(object)

    #: The user closed the question without answering.
    dismissed = Signal()

    def __init__(self, widget: Mapping[str, Any], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("askUserForm")
        self.setAutoFillBackground(True)
        self.widget_type = str(widget.get("type") or "")
        self._spec = widget
        self._inputs: dict[str, QWidget] = {}
        self._choices: list[tuple[str, QCheckBox | QRadioButton]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(8)
        self.title = QLabel(self)
        self.title.setObjectName("askUserTitle")
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        details = widget.get("description") or widget.get("message")
        if details:
            text = QLabel(str(details), self)
            text.setObjectName("hint")
            text.setWordWrap(True)
            layout.addWidget(text)

        if self.widget_type == "form":
            layout.addLayout(self._form(widget.get("fields") or ()))
        elif self.widget_type == "selection":
            layout.addWidget(self._selection(widget))

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton(self)
        self.submit_button = QPushButton(self)
        self.submit_button.setObjectName("primaryButton")
        self.submit_button.setDefault(True)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.submit_button)
        layout.addLayout(buttons)
        self.submit_button.clicked.connect(self._submit)
        self.cancel_button.clicked.connect(self._cancel)
        self._done = False
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """The form's own texts (labels the model chose stay as it wrote them); again on a language switch."""
        spec = self._spec
        self.title.setText(str(spec.get("title") or self.tr("The assistant asks")))
        if self.widget_type == "form":
            submit, cancel = str(spec.get("submitLabel") or self.tr("Submit")), self.tr("Dismiss")
        elif self.widget_type == "selection":
            submit, cancel = self.tr("Submit"), self.tr("Dismiss")
        else:
            submit = str(spec.get("confirmLabel") or self.tr("Confirm"))
            cancel = str(spec.get("cancelLabel") or self.tr("Cancel"))
        self.submit_button.setText(submit)
        self.cancel_button.setText(cancel)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _form(self, fields: Sequence[Any]) -> QFormLayout:
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for spec in fields:
            if not isinstance(spec, Mapping):
                continue
            name, kind = str(spec.get("name")), str(spec.get("type") or "text")
            default = spec.get("default")
            editor: QWidget
            if kind == "textarea":
                area = QPlainTextEdit(self)
                area.setPlainText(str(default or ""))
                area.setFixedHeight(72)
                editor = area
            elif kind == "number":
                spin = QDoubleSpinBox(self)
                spin.setRange(-1e12, 1e12)
                spin.setDecimals(4)
                spin.setValue(float(default) if isinstance(default, (int, float)) else 0.0)
                editor = spin
            elif kind == "boolean":
                box = QCheckBox(self)
                box.setChecked(bool(default))
                editor = box
            elif kind in ("select", "multiselect"):
                if kind == "select":
                    combo = QComboBox(self)
                    for value, label in _options(spec):
                        combo.addItem(label, value)
                    if isinstance(default, str):
                        combo.setCurrentIndex(max(0, combo.findData(default)))
                    editor = combo
                else:
                    holder = QWidget(self)
                    column = QVBoxLayout(holder)
                    column.setContentsMargins(0, 0, 0, 0)
                    chosen = set(default) if isinstance(default, list) else set()
                    for value, label in _options(spec):
                        check = QCheckBox(label, holder)
                        check.setChecked(value in chosen)
                        check.setProperty("value", value)
                        column.addWidget(check)
                    editor = holder
            else:
                line = QLineEdit(self)
                line.setText("" if default is None else str(default))
                if spec.get("placeholder"):
                    line.setPlaceholderText(str(spec["placeholder"]))
                editor = line
            label = str(spec.get("label") or name) + (" *" if spec.get("required") else "")
            form.addRow(label, editor)
            self._inputs[name] = editor
        return form

    def _selection(self, widget: Mapping[str, Any]) -> QWidget:
        holder = QWidget(self)
        column = QVBoxLayout(holder)
        column.setContentsMargins(0, 0, 0, 0)
        multiple = bool(widget.get("multiple"))
        group = QButtonGroup(holder)
        group.setExclusive(not multiple)
        for value, label in _options(widget):
            button: QCheckBox | QRadioButton = QCheckBox(label, holder) if multiple else QRadioButton(label, holder)
            group.addButton(button)
            column.addWidget(button)
            self._choices.append((value, button))
        if self._choices and not multiple:
            self._choices[0][1].setChecked(True)
        return holder

    def payload(self) -> dict[str, Any]:
        """What Submit sends now."""
        base: dict[str, Any] = {"type": SUBMIT, "widgetType": self.widget_type}
        if self.widget_type == "form":
            base["values"] = {name: _value_of(editor) for name, editor in self._inputs.items()}
        elif self.widget_type == "selection":
            chosen = [value for value, button in self._choices if button.isChecked()]
            base["selected"] = chosen if self._spec.get("multiple") else (chosen[0] if chosen else None)
        else:
            base["confirmed"] = True
        return base

    def missing_required(self) -> list[str]:
        missing = []
        for spec in self._spec.get("fields") or ():
            if isinstance(spec, Mapping) and spec.get("required"):
                value = _value_of(self._inputs.get(str(spec.get("name")), QWidget()))
                if value in ("", None, []):
                    missing.append(str(spec.get("label") or spec.get("name")))
        return missing

    @Slot()
    def _submit(self) -> None:
        if self._done:
            return
        if self.widget_type == "form" and self.missing_required():
            self.submit_button.setToolTip(self.tr("Fill in: {fields}").format(fields=", ".join(self.missing_required())))
            return
        self._done = True
        self.setEnabled(False)
        self.submitted.emit(self.payload())

    @Slot()
    def _cancel(self) -> None:
        if self._done:
            return
        self._done = True
        self.setEnabled(False)
        if self.widget_type == "confirmation":
            self.submitted.emit({"type": SUBMIT, "widgetType": self.widget_type, "confirmed": False})
        else:
            self.dismissed.emit()


def _value_of(editor: QWidget) -> Any:
    if isinstance(editor, QLineEdit):
        return editor.text()
    if isinstance(editor, QPlainTextEdit):
        return editor.toPlainText()
    if isinstance(editor, QDoubleSpinBox):
        value = editor.value()
        return int(value) if value.is_integer() else value
    if isinstance(editor, QCheckBox):
        return editor.isChecked()
    if isinstance(editor, QComboBox):
        return editor.currentData()
    checks = editor.findChildren(QCheckBox)
    return [str(check.property("value")) for check in checks if check.isChecked()]


def answer_lines(widget: Mapping[str, Any] | None, response: Any) -> list[str]:
    """The read-only summary of an answered widget, one line per answer."""
    if not isinstance(response, Mapping):
        return []
    if "values" in response and isinstance(response["values"], Mapping):
        labels = {
            str(spec.get("name")): str(spec.get("label") or spec.get("name"))
            for spec in (widget or {}).get("fields") or ()
            if isinstance(spec, Mapping)
        }
        return [f"{labels.get(name, name)}: {_shown(value)}" for name, value in response["values"].items()]
    if "selected" in response:
        labels = dict(_options(widget or {}))
        selected = response["selected"]
        values = selected if isinstance(selected, list) else [selected]
        return ["✓ " + ", ".join(labels.get(str(v), str(v)) for v in values if v is not None)]
    if "confirmed" in response:
        if response["confirmed"]:
            return ["✓ " + QCoreApplication.translate("AskUserForm", "Confirmed")]
        return ["✗ " + QCoreApplication.translate("AskUserForm", "Declined")]
    return [f"{key}: {_shown(value)}" for key, value in response.items() if key != "type"]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return QCoreApplication.translate("AskUserForm", "yes") if value else QCoreApplication.translate("AskUserForm", "no")
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)

