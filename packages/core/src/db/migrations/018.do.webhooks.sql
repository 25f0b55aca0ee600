-- Webhooks: an account's endpoints (at most MAX_WEBHOOK_ENDPOINTS, checked by the API) and the
-- deliveries made to them. Both go with the account; deliveries go with their endpoint.
CREATE TABLE webhook_endpoints (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  url          text NOT NULL,
  events       text[] NOT NULL,
  enabled      boolean NOT NULL DEFAULT true,
  description  text,
  -- The signing secret, encrypted (AES-256-GCM, see webhooks/secret-box.ts): signing needs it back.
  secret       text NOT NULL,
  -- The secret a rotation replaced: it signs beside the new one until previous_secret_expires_at.
  previous_secret            text,
  previous_secret_expires_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_user ON webhook_endpoints (user_id, created_at);
-- The worker's question before it queues click deliveries: which accounts want clicks.
CREATE INDEX webhook_endpoints_clicks ON webhook_endpoints (user_id) WHERE enabled AND 'click' = ANY (events);

CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event           text NOT NULL,
  -- The event's id (evt_…), the same in every delivery of it, resends included.
  event_id        text NOT NULL,
  -- A resend's original delivery; a resend is a delivery of its own, with its own attempts.
  resend_of       uuid,
  -- The event's JSON body as sent (the same bytes on every attempt and resend).
  payload         text NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  response_status integer,
  -- The first WEBHOOK_RESPONSE_PREFIX bytes of the last answer, nothing more.
  response_body   text,
  error           text,
  duration_ms     integer,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_attempt_at timestamptz
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
-- An event queued again (its job retried) makes no second delivery to the same endpoint.
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_id) WHERE resend_of IS NULL;
