"""kiln serve against its own /openapi.json, checked by schemathesis (PyPI), which no one here wrote.

schemathesis generates requests from the document (valid ones and deliberately broken ones) and
checks every response: no 5xx, only documented status codes and content types, bodies (and each
SSE event) matching their schemas, 405 with an Allow header for undocumented methods, broken
requests rejected, the API key enforced. The server fills its model's limits into the document
(largest token id, max_tokens, prompt length in ids), so it states what this server accepts.

One check stays off: positive_data_acceptance (every schema-valid request must succeed). A text
prompt's length in tokens depends on the tokenizer, so "fits the context" cannot be written in a
schema, and a generated long string is rightly refused.

The run is bounded (examples per operation, fixed seed): its server caps max_tokens at 16, so a
generated n x max_tokens request stays small. (Its body limit is the default: schemathesis does
not count 413 among the ways to refuse a broken request.)
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import API_KEY, start_server


@pytest.fixture(scope="module")
def short_answers_server():
    s = start_server(["--max-tokens-limit", "16"])
    yield s
    s.stop_gracefully()


def schemathesis_binary() -> str:
    return str(Path(sys.executable).parent / "schemathesis")


def test_server_conforms_to_its_openapi_document(short_answers_server, tmp_path):
    command = [schemathesis_binary(), "run", f"{short_answers_server.url}/openapi.json",
               "-H", f"Authorization: Bearer {API_KEY}",
               "--checks", "all", "--exclude-checks", "positive_data_acceptance",
               "--max-examples", os.environ.get("KILN_SCHEMATHESIS_EXAMPLES", "60"),
               "--request-timeout", os.environ.get("KILN_SCHEMATHESIS_REQUEST_TIMEOUT", "10"),
               "--seed", "1", "--workers", "1", "--no-color"]
    # In a scratch directory: schemathesis keeps a cache in its working directory.
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-2000:]
    # Every operation of the document was exercised, none skipped for want of a schema.
    selected = re.search(r"Selected: (\d+)/(\d+)", result.stdout)
    tested = re.search(r"Tested: (\d+)", result.stdout)
    assert selected and tested, result.stdout[-3000:]
    assert selected.group(1) == selected.group(2) == tested.group(1), result.stdout[-3000:]
