"""Who is asking: a bearer token (the API) or a session cookie (the pages), and the CSRF token
that every state-changing form carries.

A token is printed once by ``assay user add`` and stored only as its sha256
(``Platform.reviews.authenticate``). Logging in with it starts a session: a fresh random id goes
into an HTTP-only, SameSite=Strict cookie, and only the id's sha256 goes into the ledger (so a
copy of the ledger logs no one in). A session ends at logout, after ``SESSION_HOURS``, or when
the user is issued a new token. The CSRF token is bound to the session (an HMAC of the session
id, which page scripts cannot read); the login form, before any session, uses a double-submit
cookie instead.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from assay.ledger import NewEntry
from assay.platform import Platform
from assay.review import records as rr

SESSION_STARTED = "web.session.started"
SESSION_ENDED = "web.session.ended"
SESSION_COOKIE = "assay_session"
LOGIN_COOKIE = "assay_login"
"""The login form's double-submit CSRF cookie (before there is a session to bind to)."""
SESSION_HOURS = 12.0


def digest(secret: str) -> str:
    """How a secret (token or session id) is stored and compared: its sha256, hex."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time equality of two secrets (False for any non-ASCII input)."""
    try:
        return hmac.compare_digest(a.encode("ascii"), b.encode("ascii"))
    except UnicodeEncodeError:
        return False


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (None: no such header)."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip() or len(token) > 512:
        return None
    return token.strip()


class Identity:
    """Tokens and sessions over one platform's ledger."""

    def __init__(self, platform: Platform) -> None:
        self.p = platform

    def user_of_token(self, token: str) -> str | None:
        """The user whose newest token this is."""
        return self.p.reviews.authenticate(token)

    def roles(self, user: str) -> set[str]:
        """The roles ``user`` was given (roles accumulate)."""
        return self.p.reviews.roles(user)

    def groups(self, user: str) -> set[str]:
        """The groups ``user`` belongs to (empty when none)."""
        return self.p.reviews.groups(user) or set()

    def _token_sha(self, user: str) -> str | None:
        found = [
            e.body["token_sha256"]
            for e in self.p.ledger.find(kind=rr.USER, subject=user)
            if e.body.get("token_sha256")
        ]
        return str(found[-1]) if found else None

    def start(self, token: str) -> tuple[str, str] | None:
        """Log in with ``token``: ``(user, session id)``, or None when it is no one's token."""
        user = self.user_of_token(token)
        if user is None:
            return None
        session = secrets.token_urlsafe(32)
        now = self.p.clock()
        body = {
            "user": user,
            "token_sha256": digest(token),
            "expires": (now + timedelta(hours=SESSION_HOURS)).isoformat(),
        }
        self.p.ledger.append(
            NewEntry(kind=SESSION_STARTED, subject=digest(session), body=body, at=now)
        )
        return user, session

    def user_of_session(self, session: str | None) -> str | None:
        """The user of a live session (None: none, ended, expired, or its token replaced)."""
        if not session or len(session) > 128:
            return None
        entries = self.p.ledger.find(kind=(SESSION_STARTED, SESSION_ENDED), subject=digest(session))
        if not entries or entries[-1].kind != SESSION_STARTED:
            return None
        body = entries[-1].body
        if self.p.clock() >= datetime.fromisoformat(body["expires"]):
            return None
        user = str(body["user"])
        current = self._token_sha(user)
        if current is None or not same(current, str(body["token_sha256"])):
            return None
        return user

    def end(self, session: str) -> None:
        """Log out: the session id stops working everywhere."""
        if self.user_of_session(session) is not None:
            self.p.ledger.append(
                NewEntry(kind=SESSION_ENDED, subject=digest(session), body={}, at=self.p.clock())
            )


def csrf_for(session: str) -> str:
    """The CSRF token of a session: derived from the session id, which no script can read."""
    return hmac.new(session.encode(), b"assay-web-csrf", hashlib.sha256).hexdigest()
