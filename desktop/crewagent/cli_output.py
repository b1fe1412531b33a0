"""What the command-line listings share: a JSON array for ``--json``, a line when there is nothing."""

from __future__ import annotations

import json
import sys
from typing import Any


def listing_done(as_json: bool, records: list[Any], empty: str) -> bool:
    """Print ``records`` as a JSON array (``--json``), or ``empty`` when there are none.

    True when that was the whole answer; False: the caller prints its table.
    """
    if as_json:
        json.dump(records, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return True
    if not records:
        print(empty)
        return True
    return False
