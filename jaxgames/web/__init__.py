"""The browser board: ``jaxgames play --web`` serves a page on 127.0.0.1 to play any game
against any agent spec (:mod:`jaxgames.web.server`, the HTTP side and its JSON API;
:mod:`jaxgames.web.session`, the game and every JAX call; ``board.html``, the page: plain
HTML and JavaScript, no build step, nothing fetched from the network)."""

from jaxgames.web.server import BoardServer, serve
from jaxgames.web.session import Display, WebGame, agent_spec

__all__ = ["BoardServer", "Display", "WebGame", "agent_spec", "serve"]
