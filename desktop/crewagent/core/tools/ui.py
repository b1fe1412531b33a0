"""ui.ask_user: show the user a form, a selection or a confirmation and wait for the answer.

The arguments are the widget itself (flat, so the tool's JSON schema stays a plain object):
``{"type": "form", "title", "description?", "fields": [{name, label, type, required, options?,
default?, placeholder?}], "submitLabel?"}``, ``{"type": "selection", "title", "options": ["a",
{value, label?, description?}], "multiple?"}`` or ``{"type": "confirmation", "title", "message?",
"confirmLabel?", "cancelLabel?"}``.

The validated widget (normalised, with ``callId``) goes to ``ctx.ask_user``; what it returns (the
user's ``WIDGET_SUBMIT`` payload) comes back as ``{"ok": true, "widgetType", "response"}``. A
dismissed widget (``None``) is ``E_USER_CANCELLED``; no UI attached is ``TOOL_NOT_AVAILABLE``.
Waiting for a person is not a hang, so this tool has no timeout; Stop still cancels it.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from crewagent.core import texts
from crewagent.core.tools.registry import Tool, ToolContext, ToolResult, describe_validation_error
from crewagent.core.tools.results import ErrorCode, error, ok

MAX_FIELDS = 30
MAX_OPTIONS = 50


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Option(_Strict):
    value: str = Field(min_length=1)
    label: str | None = None
    description: str | None = None


def _options(value: Any) -> Any:
    """Plain strings are accepted as options: ``"a"`` means ``{"value": "a"}``."""
    if isinstance(value, list):
        return [{"value": item} if isinstance(item, str) else item for item in value]
    return value


class FormField(_Strict):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$")
    label: str = Field(min_length=1)
    type: Literal["text", "textarea", "number", "boolean", "select", "multiselect"] = "text"
    required: bool = False
    options: list[Option] | None = Field(None, max_length=MAX_OPTIONS)
    default: str | int | float | bool | list[str] | None = None
    placeholder: str | None = None
    description: str | None = None

    _normalise_options = field_validator("options", mode="before")(_options)

    @model_validator(mode="after")
    def _options_for_choices(self) -> FormField:
        if self.type in ("select", "multiselect") and not self.options:
            raise ValueError(f"a {self.type} field needs options")
        return self


class FormWidget(_Strict):
    type: Literal["form"]
    title: str = Field(min_length=1)
    description: str | None = None
    fields: list[FormField] = Field(min_length=1, max_length=MAX_FIELDS)
    submitLabel: str | None = None

    @model_validator(mode="after")
    def _unique_names(self) -> FormWidget:
        names = [field.name for field in self.fields]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"field names must be unique: {', '.join(duplicates)}")
        return self


class SelectionWidget(_Strict):
    type: Literal["selection"]
    title: str = Field(min_length=1)
    description: str | None = None
    options: list[Option] = Field(min_length=1, max_length=MAX_OPTIONS)
    multiple: bool = False

    _normalise_options = field_validator("options", mode="before")(_options)


class ConfirmationWidget(_Strict):
    type: Literal["confirmation"]
    title: str = Field(min_length=1)
    message: str | None = None
    description: str | None = None
    confirmLabel: str = "Confirm"
    cancelLabel: str = "Cancel"


Widget = Annotated[FormWidget | SelectionWidget | ConfirmationWidget, Field(discriminator="type")]
WIDGET_ADAPTER: TypeAdapter[FormWidget | SelectionWidget | ConfirmationWidget] = TypeAdapter(Widget)


def validate_widget(payload: dict[str, Any]) -> FormWidget | SelectionWidget | ConfirmationWidget:
    """The widget for a payload; raises pydantic's ValidationError when it is not one."""
    return WIDGET_ADAPTER.validate_python(payload)


async def ask_user(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    try:
        widget = validate_widget(args)
    except ValidationError as exc:
        return error(ErrorCode.E_SCHEMA_VALIDATION, f"Invalid widget: {describe_validation_error(exc)}")
    if ctx.ask_user is None:
        return error(
            ErrorCode.TOOL_NOT_AVAILABLE,
            "No one can answer here (no user interface is attached). Go on without asking and state your assumptions.",
        )
    payload = widget.model_dump(mode="json", exclude_none=True)
    if ctx.call_id is not None:
        payload["callId"] = ctx.call_id
    answer = await ctx.ask_user(payload)
    if answer is None:
        return error(ErrorCode.E_USER_CANCELLED, texts.USER_CANCELLED)
    return ok(widgetType=widget.type, response=answer)


_OPTION_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string"},
        {
            "type": "object",
            "properties": {"value": {"type": "string"}, "label": {"type": "string"}, "description": {"type": "string"}},
            "required": ["value"],
        },
    ]
}

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["form", "selection", "confirmation"]},
        "title": {"type": "string", "description": "The question, shown as the widget's title."},
        "description": {"type": "string"},
        "fields": {
            "type": "array",
            "description": "form only: the inputs to fill in.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "label": {"type": "string"},
                    "type": {"type": "string", "enum": ["text", "textarea", "number", "boolean", "select", "multiselect"]},
                    "required": {"type": "boolean"},
                    "options": {"type": "array", "items": _OPTION_SCHEMA},
                    "default": {},
                    "placeholder": {"type": "string"},
                    "description": {"type": "string"},
                },
                "required": ["name", "label"],
            },
        },
        "submitLabel": {"type": "string"},
        "options": {"type": "array", "description": "selection only: the choices.", "items": _OPTION_SCHEMA},
        "multiple": {"type": "boolean", "description": "selection only: allow several choices."},
        "message": {"type": "string", "description": "confirmation only: what the user confirms."},
        "confirmLabel": {"type": "string"},
        "cancelLabel": {"type": "string"},
    },
    "required": ["type", "title"],
}

ASK_USER_TOOL = Tool(
    name="ui.ask_user",
    description=(
        "Ask the user and wait for the answer: a form (fields to fill in), a selection (pick one or several "
        "options) or a confirmation (yes/no). Use it when a step needs input you do not have."
    ),
    parameters=PARAMETERS,
    handler=ask_user,
    timeout_s=math.inf,
    needs_ui=True,
)
