"""A local host for `function_app.py`: runs its functions the way the Azure Functions host does.

Modules: `config` (host.json), `routes` (route templates), `keys` (auth levels and function keys), `functions`
(loading the app and describing its functions), `invocation` (binding arguments, output delivery), `http_app` (the
ASGI app for HTTP triggers and admin endpoints), `protocol` (uvicorn's HTTP protocol with a header deadline),
`queue_host` (queue output bindings and queue triggers), `ncrontab` and `timer_host` (timer triggers), `storage`
(Azurite, a connection string, or embedded SQLite), `local_catalog` (the embedded catalog unless one is configured),
`state` (kept keys and the running-host record in the data folder), `local_host` (starting and stopping all of it),
`cli` (`ol2purview serve` / `ol2purview worker`).
"""
