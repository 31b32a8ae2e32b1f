"""Reads a signed catalog as an independent client would: checks the Ed25519 signature of the exact body bytes with
`cryptography` against the published key, then prints {"catalogVersion", "alerts"} as JSON.

    python3 catalog_alerts.py BODY_FILE SIGNATURE_BASE64 PUBLIC_KEY_BASE64
Exit 1 (and "bad signature") when the signature does not hold.
"""
import base64
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

body = open(sys.argv[1], "rb").read()
signature = base64.b64decode(sys.argv[2])
key = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[3]))
try:
    key.verify(signature, body)
except InvalidSignature:
    print("bad signature")
    sys.exit(1)
catalog = json.loads(body)
print(json.dumps({"catalogVersion": catalog["catalogVersion"], "alerts": catalog.get("alerts")}))
