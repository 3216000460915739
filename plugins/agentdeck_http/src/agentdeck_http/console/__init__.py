"""The operator console: a browser UI served at ``<path>/ui/`` over the binding's own JSON API.

The pages are hand-written ES modules and CSS shipped in this package (``static/``); nothing is
built on the user's machine and nothing is fetched from elsewhere at run time. The server side
here only serves that shell and the login that turns an API key into a session cookie
(:mod:`~agentdeck_http.console.sessions`): every page reads and acts through the same routes an
HTTP client uses, with the same keys and namespaces (:mod:`~agentdeck_http.console.routes`).
"""
