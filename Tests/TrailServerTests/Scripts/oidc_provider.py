"""An OpenID Connect provider on loopback for the sign-on tests, built on Authlib's authorization server (Flask):
discovery, JWKS, an authorization endpoint with a sign-in form (it stands for the agency's sign-in page), the token
endpoint (client_secret_basic, PKCE S256 required, each code once, by Authlib) and an end-session endpoint. ID tokens
are made by Authlib's OpenIDCode extension and signed by joserfc.

POST /control with JSON sets what the next ID tokens carry, through Authlib's own hooks (the refusal cases): {"email",
"email_verified", "aud", "exp_offset", "nonce", "alg" (RS256, ES256, none, or HS256 keyed with the RSA public key),
"kid" ("stranger": a key the JWKS never lists), "iss", "id_token_email" (false: the email only at /userinfo, as
Login.gov does), "userinfo_sub", "sub" (the person's id, default "agency-" + email), "amr", "acr"}. GET /stats answers {"jwks_fetches", "userinfo_fetches", "acr_values", "prompt"}.

Besides CLIENT_ID (confidential, client_secret_basic) it knows CLIENT_ID + "-public", a public client that proves
itself with PKCE alone.

usage: oidc_provider.py CLIENT_ID CLIENT_SECRET   (prints the port it listens on, then serves until killed)"""
import base64
import hashlib
import hmac
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
import warnings

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, jsonify, request
from joserfc.jwk import ECKey, RSAKey

warnings.simplefilter("ignore", DeprecationWarning)  # Authlib's notes to its own callers, not to this provider

CLIENT_ID, CLIENT_SECRET = sys.argv[1], sys.argv[2]
RSA = RSAKey.generate_key(2048, parameters={"kid": "rsa1", "use": "sig"})
EC = ECKey.generate_key("P-256", parameters={"kid": "ec1", "use": "sig"})
STRANGER = RSAKey.generate_key(2048, parameters={"kid": "stranger", "use": "sig"})
codes = {}         # code -> AuthorizationCode
tokens = {}        # access token -> the person's email
control = {}       # the next tokens' changes
stats = {"jwks_fetches": 0, "userinfo_fetches": 0, "acr_values": None, "prompt": None}

def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    PORT = probe.getsockname()[1]
ISSUER = f"http://127.0.0.1:{PORT}"


class Client(ClientMixin):
    """Trail Companion, registered twice: a confidential web client, and a public one (PKCE alone)."""

    def __init__(self, client_id, public):
        self.client_id, self.public = client_id, public

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return " ".join(s for s in scope.split() if s in ("openid", "email", "profile"))

    def check_redirect_uri(self, redirect_uri):
        # The server under test runs on a loopback port the provider cannot know in advance.
        return redirect_uri.startswith(("http://127.0.0.1:", "http://localhost:")) and redirect_uri.endswith("/auth/oidc/callback")

    def check_client_secret(self, client_secret):
        return not self.public and hmac.compare_digest(client_secret, CLIENT_SECRET)

    def check_endpoint_auth_method(self, method, endpoint):
        if endpoint != "token":
            return True
        return method == ("none" if self.public else "client_secret_basic")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type == "authorization_code"


CLIENTS = {CLIENT_ID: Client(CLIENT_ID, public=False), CLIENT_ID + "-public": Client(CLIENT_ID + "-public", public=True)}


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, code, redirect_uri, scope, user, nonce, challenge, method):
        self.code, self.redirect_uri, self.scope, self.user = code, redirect_uri, scope, user
        self.nonce, self.code_challenge, self.code_challenge_method = nonce, challenge, method
        self.auth_time = int(time.time())

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time

    def get_acr(self):
        return None

    def get_amr(self):
        return None


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "none"]

    def save_authorization_code(self, code, request):
        data = request.payload.data
        codes[code] = AuthorizationCode(code, request.payload.redirect_uri, request.payload.scope, request.user,
                                        data.get("nonce"), data.get("code_challenge"), data.get("code_challenge_method"))

    def query_authorization_code(self, code, client):
        return codes.get(code)

    def delete_authorization_code(self, authorization_code):
        codes.pop(authorization_code.code, None)  # each code works once

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class IDToken(OpenIDCode):
    """Authlib's ID token, with what /control asked for."""

    def exists_nonce(self, nonce, request):
        return False

    def signing_key(self):
        alg = control.get("alg", "RS256")
        if control.get("kid") == "stranger":
            return STRANGER
        return EC if alg == "ES256" else RSA

    def resolve_client_private_key(self, client):
        return self.signing_key()

    def get_client_algorithm(self, client):
        alg = control.get("alg", "RS256")
        return "RS256" if alg == "HS256" else alg

    def encode_id_token(self, token, request):
        signed = super().encode_id_token(token, request)
        if control.get("alg") != "HS256":
            return signed
        # The classic confusion attack: the same claims with HMAC keyed by the provider's public key, which anyone can
        # fetch. Made by hand: joserfc (rightly) refuses a public key as an HMAC secret.
        header = b64(json.dumps({"alg": "HS256", "kid": RSA.kid}).encode())
        signing_input = header + "." + signed.split(".")[1]
        return signing_input + "." + b64(hmac.new(RSA.as_pem(private=False), signing_input.encode(), hashlib.sha256).digest())

    def get_encode_header(self, client):
        header = {"alg": self.get_client_algorithm(client)}
        if header["alg"] != "none":
            header["kid"] = self.signing_key().kid
        return header

    def get_client_claims(self, client):
        now = int(time.time())
        claims = {"iss": control.get("iss", ISSUER), "aud": control.get("aud", client.get_client_id()), "iat": now - 5,
                  "exp": now + control.get("exp_offset", 300)}
        claims.update({key: control[key] for key in ("amr", "acr") if key in control})
        return claims

    def get_authorization_code_claims(self, authorization_code):
        claims = super().get_authorization_code_claims(authorization_code)
        if "nonce" in control:
            claims["nonce"] = control["nonce"]
        return claims

    def generate_user_info(self, user, scope):
        sub = control.get("sub", "agency-" + user)
        if control.get("id_token_email", True) is False:
            return UserInfo(sub=sub)
        return UserInfo(sub=sub, email=user, email_verified=control.get("email_verified", True), name="Pat Ranger")


app = Flask(__name__)
logging.getLogger("werkzeug").setLevel(logging.ERROR)
def save_token(token, request):
    tokens[token["access_token"]] = request.user


server = AuthorizationServer(app, query_client=CLIENTS.get, save_token=save_token)
server.register_grant(CodeGrant, [IDToken(require_nonce=True), CodeChallenge(required=True)])

FORM = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Agency sign-in</title></head><body><main>
<h1>Agency sign-in</h1><form method="post"><label for="email">Work email</label>
<input id="email" name="email" type="email" autocomplete="username" required><button type="submit">Sign in</button></form>
</main></body></html>"""


@app.get("/.well-known/openid-configuration")
def discovery():
    return jsonify({"issuer": ISSUER, "authorization_endpoint": ISSUER + "/authorize", "token_endpoint": ISSUER + "/token",
                    "jwks_uri": ISSUER + "/jwks", "end_session_endpoint": ISSUER + "/logout", "userinfo_endpoint": ISSUER + "/userinfo",
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256", "ES256"],
                    "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                    "scopes_supported": ["openid", "email", "profile"]})


@app.get("/jwks")
def jwks():
    stats["jwks_fetches"] += 1
    return jsonify({"keys": [dict(k.as_dict(private=False), kid=k.kid, use="sig") for k in (RSA, EC)]})


@app.get("/stats")
def statistics():
    return jsonify(stats)


@app.get("/userinfo")
def userinfo():
    stats["userinfo_fetches"] += 1
    email = tokens.get(request.headers.get("Authorization", "").removeprefix("Bearer "))
    if email is None:
        return jsonify({"error": "invalid_token"}), 401
    return jsonify({"sub": control.get("userinfo_sub", control.get("sub", "agency-" + email)), "email": email,
                    "email_verified": control.get("email_verified", True)})


@app.route("/authorize", methods=["GET", "POST"])
def authorize():
    if request.method == "GET":
        stats["acr_values"], stats["prompt"] = request.args.get("acr_values"), request.args.get("prompt")
        try:
            server.get_consent_grant(end_user=None)  # checks client, redirect URI, scope, PKCE and nonce first
        except Exception as error:  # noqa: BLE001 - Authlib's OAuth2Error, shown as the provider would
            return jsonify({"error": getattr(error, "error", "invalid_request"), "error_description": getattr(error, "description", "")}), 400
        return FORM
    return server.create_authorization_response(grant_user=request.form.get("email") or control.get("email", "ranger@agency.gov"))


@app.post("/token")
def token():
    return server.create_token_response()


@app.get("/logout")
def logout():
    return "<!doctype html><html lang=\"en\"><head><title>Signed out</title></head><body><main><h1>Signed out of the agency</h1></main></body></html>"


@app.post("/control")
def set_control():
    control.clear()
    control.update(request.get_json(force=True) or {})
    return jsonify({})


def watch_parent():
    """Ends with the process that started it, so a run leaves no provider behind."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


if __name__ == "__main__":
    os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain HTTP on loopback, as the tests run
    # The port is the only line on standard output: the tests read it. Flask would print its banner there too.
    import flask.cli
    flask.cli.show_server_banner = lambda *args, **kwargs: None
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=watch_parent, daemon=True).start()
    print(PORT, flush=True)
    app.run(host="127.0.0.1", port=PORT, threaded=True)
