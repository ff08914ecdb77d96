"""The Snowball English stemmer, vendored from the ``snowballstemmer`` package (3.1.1, BSD-3-Clause).

Vendored rather than depended on so that every install stems the same way: relevance scores are
recorded in traces and a turn must rebuild byte for byte on any machine. The three modules are
the package's generated code, unchanged (LICENSE beside this file).
"""

from .english_stemmer import EnglishStemmer

SNOWBALL_VERSION = "3.1.1"

__all__ = ["SNOWBALL_VERSION", "EnglishStemmer"]
