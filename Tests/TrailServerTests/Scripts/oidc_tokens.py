"""ID tokens for OIDCTokenVerifierTests, made by joserfc (an independent JOSE implementation) and, for the forgeries
no library will make (alg none, HS256 keyed with the provider's public key), by hand with the standard library.

usage: oidc_tokens.py ISSUER CLIENT_ID NONCE NOW
prints JSON: {"jwks": first key set, "rotated": the key set after a rotation, "single": rsa1 alone, "single_no_kid":
rsa1 alone and published without a kid, "replaced": rsa1's id on a new key (ec1 beside it), "withdrawn": ec1 alone,
"tokens": {case: token}}"""
import base64
import hashlib
import hmac
import json
import sys

from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

issuer, client_id, nonce, now = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

rsa1 = RSAKey.generate_key(2048, parameters={"kid": "rsa1", "use": "sig"})
ec1 = ECKey.generate_key("P-256", parameters={"kid": "ec1", "use": "sig"})
rsa2 = RSAKey.generate_key(2048, parameters={"kid": "rsa2", "use": "sig"})
stranger = RSAKey.generate_key(2048, parameters={"kid": "stranger", "use": "sig"})
# The provider replaced rsa1's key under the same id.
rsa1_new = RSAKey.generate_key(2048, parameters={"kid": "rsa1", "use": "sig"})


def claims(**changes):
    base = {"iss": issuer, "sub": "agency-user-1", "aud": client_id, "exp": now + 300, "iat": now - 10, "nonce": nonce,
            "email": "ranger@agency.gov", "email_verified": True, "name": "Pat Ranger"}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def sign(payload, key, alg):
    return jwt.encode({"alg": alg, "kid": key.kid}, payload, key, algorithms=[alg])


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def by_hand(header, payload, secret: bytes | None):
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    signature = b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()) if secret else ""
    return signing_input + "." + signature


valid = sign(claims(), rsa1, "RS256")
head, body, signature = valid.split(".")
tampered_body = b64(json.dumps(claims(email="boss@agency.gov")).encode())
public_pem = rsa1.as_pem(private=False)

tokens = {
    "valid_rs256": valid,
    "valid_es256": sign(claims(), ec1, "ES256"),
    "rotated_key": sign(claims(), rsa2, "RS256"),
    "wrong_aud": sign(claims(aud="another-client"), rsa1, "RS256"),
    "wrong_iss": sign(claims(iss="https://evil.example"), rsa1, "RS256"),
    "expired": sign(claims(exp=now - 600, iat=now - 900), rsa1, "RS256"),
    "future": sign(claims(iat=now + 3600, exp=now + 7200), rsa1, "RS256"),
    "wrong_nonce": sign(claims(nonce="another-sign-in"), rsa1, "RS256"),
    "no_nonce": sign(claims(nonce=None), rsa1, "RS256"),
    "azp_other": sign(claims(aud=[client_id, "other"], azp="other"), rsa1, "RS256"),
    "azp_ours": sign(claims(aud=[client_id, "other"], azp=client_id), rsa1, "RS256"),
    "unknown_kid": sign(claims(), stranger, "RS256"),
    "email_unverified": sign(claims(email_verified=False), rsa1, "RS256"),
    # Microsoft Entra ID: no email_verified; the optional claim xms_edov says whether the tenant owns the domain.
    "entra_domain_verified": sign(claims(email_verified=None, xms_edov=True), rsa1, "RS256"),
    "entra_domain_unverified": sign(claims(email_verified=None, xms_edov=False), rsa1, "RS256"),
    "entra_no_claim": sign(claims(email_verified=None), rsa1, "RS256"),
    "entra_contradiction": sign(claims(email_verified=False, xms_edov=True), rsa1, "RS256"),
    "tampered": ".".join([head, tampered_body, signature]),
    "alg_none": by_hand({"alg": "none", "kid": "rsa1"}, claims(), None),
    "hs256_public_key": by_hand({"alg": "HS256", "kid": "rsa1"}, claims(), public_pem),
    # OpenID Connect Core 10.1: a kid is required only when the key set holds several keys.
    "no_kid": jwt.encode({"alg": "RS256"}, claims(), rsa1, algorithms=["RS256"]),
    "no_kid_other_key": jwt.encode({"alg": "RS256"}, claims(), stranger, algorithms=["RS256"]),
    "replaced_key": sign(claims(), rsa1_new, "RS256"),
}


def public_set(*keys):
    return {"keys": [dict(key.as_dict(private=False), kid=key.kid, use="sig", alg="ES256" if key.key_type == "EC" else "RS256") for key in keys]}


single_no_kid = {"keys": [{k: v for k, v in key.items() if k != "kid"} for key in public_set(rsa1)["keys"]]}
print(json.dumps({"jwks": public_set(rsa1, ec1), "rotated": public_set(rsa1, ec1, rsa2), "single": public_set(rsa1),
                  "single_no_kid": single_no_kid, "replaced": public_set(rsa1_new, ec1), "withdrawn": public_set(ec1),
                  "tokens": tokens}))
