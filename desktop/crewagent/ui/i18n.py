"""The UI language: Qt translators for English (the source text) and Simplified Chinese, switchable live.

Installing a translator makes Qt send every widget a ``LanguageChange`` event; widgets set their
texts in a ``retranslate_ui()`` method that ``changeEvent`` calls again (see MainWindow). The
catalogue is ``resources/translations/crewagent_<code>.ts``, compiled to ``.qm`` next to it by
``make translations`` (lupdate on the explicit list of UI files plus ``core/texts.py``, whose texts
``core_texts.translate_core`` translates at display time; then lrelease). Giving lupdate the folder
(``-extensions py``) finds no strings.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib import resources

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QObject, QTranslator, Signal

log = logging.getLogger(__name__)

#: Language code -> its name in that language (what the Appearance page lists).
LANGUAGES: dict[str, str] = {"en": "English", "zh_CN": "简体中文"}
DEFAULT_LANGUAGE = "en"
CATALOGUE = "crewagent"


@lru_cache(maxsize=None)
def catalogue_bytes(code: str) -> bytes:
    """The compiled app catalogue for ``code`` (empty for English, the source language)."""
    if code == DEFAULT_LANGUAGE:
        return b""
    resource = resources.files("crewagent.resources") / "translations" / f"{CATALOGUE}_{code}.qm"
    return resource.read_bytes()


class LanguageManager(QObject):
    """Installs the translators of the chosen language on the application."""

    #: The language code now in effect (emitted only on a real change).
    language_changed = Signal(str)

    def __init__(self, app: QCoreApplication, parent: QObject | None = None):
        super().__init__(parent)
        self._app = app
        self._code = DEFAULT_LANGUAGE
        self._translators: list[QTranslator] = []
        # QTranslator.loadFromData keeps a pointer to the data: keep the bytes alive with it.
        self._data: list[bytes] = []

    @property
    def language(self) -> str:
        return self._code

    def set_language(self, code: str) -> None:
        """Switch to ``code`` (``en`` or ``zh_CN``; anything else means English). Widgets retranslate."""
        code = code if code in LANGUAGES else DEFAULT_LANGUAGE
        if code == self._code:
            return
        for translator in self._translators:
            self._app.removeTranslator(translator)
        self._translators, self._data = [], []
        QLocale.setDefault(QLocale(code))
        if code != DEFAULT_LANGUAGE:
            self._install_app_catalogue(code)
            self._install_qt_catalogue(code)
        self._code = code
        log.info("UI language: %s", code)
        self.language_changed.emit(code)

    def _install_app_catalogue(self, code: str) -> None:
        data = catalogue_bytes(code)
        translator = QTranslator(self)
        if not translator.load(data):
            log.warning("the %s catalogue could not be loaded; the UI stays in English", code)
            return
        self._data.append(data)
        self._translators.append(translator)
        self._app.installTranslator(translator)

    def _install_qt_catalogue(self, code: str) -> None:
        # Qt's own strings (standard buttons, context menus of text fields).
        translator = QTranslator(self)
        if translator.load(f"qtbase_{code}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            self._translators.append(translator)
            self._app.installTranslator(translator)
