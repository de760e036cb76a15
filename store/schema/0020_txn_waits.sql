-- 0020: the txns whose writes wait for another txn to end (store/txn_waits.py): an add that found a
-- partition added by a txn still open waits for it, and a wait that would close a cycle (the holder
-- waits, directly or through others, for the waiter) is refused at once instead of lasting until
-- both time out. A row lasts while its wait does; one a gateway left behind (it died waiting) is
-- ignored once past expires_at, the end of that wait's bound, and deleted by the next registration.
CREATE TABLE txn_waits (
    wait_id     bigserial PRIMARY KEY,
    waiter      bigint NOT NULL,
    holder      bigint NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX txn_waits_waiter ON txn_waits (waiter);
