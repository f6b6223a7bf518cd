"""Names for JSON-shaped values, so records and repositories say what they hold instead of Any.

A JSON column (metadata, provider_data, event data) is read back as a ``JsonObject``; code that
only reads one passes it on as a ``Mapping[str, object]``.
"""

from __future__ import annotations

from typing import TypeAlias

JsonObject: TypeAlias = dict[str, object]
