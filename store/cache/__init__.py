"""The gateway's cache of tables and partitions, kept current by the poller (poller/).

- `facade`: `CachedCatalog`, what every protocol's servicer calls: reads cache first and from
  PostgreSQL on a miss, and the cache bookkeeping of writes. Servicers use nothing else here.
- `sharded`: the entries by table id and by name, the read decision, the memory bound.
- `entry`: one cached table (immutable versions, pre-encoded) and the `Codec` that encodes them.
- `fills`: the tables reads missed, which the poller loads.
- `loader`: entries read from PostgreSQL at a recorded log position.
"""
