"""docs/TRACE_FORMAT.md and the schema models say the same: the generated key list is current, and
the prose table names every key of every event type's model."""

from __future__ import annotations

import re
from pathlib import Path

from arcana_jupyter.schema.events import EVENT_TYPES, keys_markdown, metadata_keys

DOC = Path(__file__).resolve().parents[2] / "docs" / "TRACE_FORMAT.md"


def test_the_generated_key_list_matches_the_models() -> None:
    text = DOC.read_text()
    block = re.search(r"<!-- keys: generated -->\n(.*?)<!-- /keys -->", text, re.S)
    assert block, "docs/TRACE_FORMAT.md lost its generated key list"
    assert block.group(1).strip() == keys_markdown(), (
        "regenerate the list: python -c 'from arcana_jupyter.schema.events import keys_markdown;"
        " print(keys_markdown())'"
    )


def test_the_table_describes_every_key_of_every_model() -> None:
    rows: dict[str, str] = {}
    current = None
    for line in DOC.read_text().split("## Metadata by event type", 1)[1].split("\n## ", 1)[0].splitlines():
        m = re.match(r"\| `(\w+)` \|", line)
        if m:
            current = m.group(1)
            rows[current] = line
        elif current and line and not line.startswith("|"):
            rows[current] += line  # a row continued on the next line
    assert set(rows) == set(EVENT_TYPES)
    missing = {et: [k for k in metadata_keys(et) if f"`{k}`" not in rows[et]] for et in EVENT_TYPES}
    assert not {et: ks for et, ks in missing.items() if ks}
