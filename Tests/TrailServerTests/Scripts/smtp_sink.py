"""A real SMTP server for the email tests (aiosmtpd): every message it accepts is written to a folder as JSON
({"mail_from", "rcpt_tos", "data"} and, as Python's email parser reads it, "to", "subject", "body"), one file per message, written whole then renamed, so a reader never sees half.

    python3 smtp_sink.py PORT FOLDER [--auth USER:PASSWORD] [--host ADDRESS]

Listens on 127.0.0.1:PORT (or ADDRESS:PORT) (0: any free port) and prints the port on its first line once it accepts connections.
With --auth it offers AUTH PLAIN/LOGIN without TLS (loopback only) and refuses mail from anyone who did not log in.
Stops on SIGTERM.
"""

import asyncio
import email
import email.policy
import itertools
import json
import os
import signal
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

# A parent that blocks signals (the Swift test runner does) hands the mask down: let SIGTERM through again, so the
# tests' stop() ends this server.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
port, folder = int(sys.argv[1]), sys.argv[2]
credentials = None
host = "127.0.0.1"
arguments = sys.argv[3:]
while len(arguments) >= 2:
    if arguments[0] == "--auth":
        user, _, password = arguments[1].partition(":")
        credentials = (user.encode(), password.encode())
    elif arguments[0] == "--host":
        host = arguments[1]
    arguments = arguments[2:]
os.makedirs(folder, exist_ok=True)
counter = itertools.count(1)


class Sink:
    async def handle_DATA(self, server, session, envelope):
        number = next(counter)
        # Python's own parser decodes the headers (RFC 2047) and the body (base64, charset): an independent reader.
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "data": envelope.original_content.decode("utf-8", "replace"),
            "to": str(parsed["to"]),
            "from": str(parsed["from"]),
            "subject": str(parsed["subject"]),
            "content_type": parsed.get_content_type(),
            "body": parsed.get_content(),
            "authenticated": bool(getattr(session, "authenticated", False)),
        }
        temporary = os.path.join(folder, f".{number}.tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.rename(temporary, os.path.join(folder, f"{os.getpid()}-{number:05d}.json"))
        return "250 OK"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == credentials
    # handled=False: aiosmtpd then answers 535 itself (handled=True would leave the client waiting for an answer).
    return AuthResult(success=ok, handled=False)


options = {}
if credentials:
    options = dict(authenticator=authenticator, auth_required=True, auth_require_tls=False)


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(Sink(), hostname="trail-test-sink", **options), host=host, port=port)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    server.close()


asyncio.run(main())
