"""Sessions: the run history and grant epoch an agent works in (``docs/lattice.md``).

:class:`SessionStore` keeps :class:`Session` records under ``.lattice/sessions/``. The durable
journal, continuity projection and explicit contract control of issue 26 build on it.
"""

from lattice_runtime.session.sessions import SESSION_ID_PATTERN, Session, SessionStore

__all__ = ["SESSION_ID_PATTERN", "Session", "SessionStore"]
