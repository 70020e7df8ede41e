"""A local host for `function_app.py`: serves its functions over HTTP the way the Azure Functions host does.

Modules: `config` (host.json), `routes` (route templates), `keys` (auth levels and function keys), `functions`
(loading the app and describing its functions), `invocation` (binding arguments, output delivery), `http_app` (the
ASGI app for HTTP triggers), `cli` (`ol2purview serve`).
"""
