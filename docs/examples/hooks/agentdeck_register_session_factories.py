"""Conversation sessions for ``notebook://``: the same session object for the same session id."""

from types import ModuleType

import agentdeck
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, SessionFactory


class NotebookSessions(SessionFactory):
    """One list of turns per session id; a real factory returns its engine SDK's session."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sessions: dict[str, list[str]] = {}

    @classmethod
    def from_request(cls, request: BackendRequest) -> "NotebookSessions":
        return cls(request.url)

    def session_for(self, session_id: str) -> list[str]:
        return self.sessions.setdefault(session_id, [])


sessions_plugin = ModuleType("notebook.plugin")


@agentdeck.hookimpl
def agentdeck_register_session_factories(register: RegisterScheme[SessionFactory]) -> None:
    register("notebook", NotebookSessions.from_request, description="sessions in a notebook")


sessions_plugin.agentdeck_register_session_factories = agentdeck_register_session_factories

host = PluginHost.from_plugins(sessions_plugin)
sessions = host.session_factory(BackendRequest("notebook://"))  # what AGENTDECK_SESSION picks
sessions.session_for("alice").append("hi, I'm Alice")
print(sessions.session_for("alice"), sessions.session_for("bob"))
