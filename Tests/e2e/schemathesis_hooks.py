"""schemathesis hooks for `test_api_schemathesis.py` (loaded through `hooks` in the generated schemathesis.toml).

tus PATCH bodies are `application/offset+octet-stream`: raw bytes, sent as schemathesis sends `application/octet-stream`.
"""
import schemathesis

schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")
