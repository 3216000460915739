"""A third-party AgentDeck plugin used as a test fixture (see ``adk_thirdparty.plugin``)."""

from adk_thirdparty.plugin import ThirdPartyEventStore, ThirdPartySettings

__all__ = ["ThirdPartyEventStore", "ThirdPartySettings"]
