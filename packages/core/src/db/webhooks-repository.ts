import type { WebhookEventType } from '../schemas/webhooks.js';
import type { Sql, TransactionSql } from './client.js';
import { isUuid } from './uuid.js';

export interface WebhookEndpointRecord {
  id: string;
  userId: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  /** The signing secret, sealed (see webhooks/secret-box.ts). */
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewWebhookEndpoint {
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  description?: string;
  secret: string;
}

export interface WebhookEndpointChanges {
  url?: string;
  events?: WebhookEventType[];
  enabled?: boolean;
  description?: string | null;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveryRecord {
  id: string;
  endpointId: string;
  event: WebhookEventType;
  eventId: string;
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
}

/** One attempt's outcome, as the delivery log keeps it. */
export interface WebhookAttempt {
  status: WebhookDeliveryStatus;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
}

/** An event to be delivered to an endpoint: its id, type and body as sent. */
export interface WebhookDeliveryInput {
  eventId: string;
  event: WebhookEventType;
  payload: string;
}

/** Thrown by create when the account has its MAX_WEBHOOK_ENDPOINTS already. */
export class WebhookEndpointsFullError extends Error {
  override name = 'WebhookEndpointsFullError';
}

const endpointColumns = (sql: Sql | TransactionSql) => sql`
  id, user_id AS "userId", url, events, enabled, description, secret, previous_secret AS "previousSecret",
  previous_secret_expires_at AS "previousSecretExpiresAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

const deliveryColumns = (sql: Sql) => sql`
  id, endpoint_id AS "endpointId", event, event_id AS "eventId", payload, status, attempts, response_status AS "responseStatus",
  response_body AS "responseBody", error, duration_ms AS "durationMs", created_at AS "createdAt", last_attempt_at AS "lastAttemptAt"`;

/** Webhook endpoints and their delivery log. SQL for webhooks lives here and nowhere else. */
export function webhooksRepository(sql: Sql) {
  return {
    /** Inserts an endpoint unless the account has `max` already (counted under a lock on the account, so two creates cannot both pass). */
    async create(userId: string, endpoint: NewWebhookEndpoint, max: number): Promise<WebhookEndpointRecord> {
      return sql.begin(async (tx) => {
        await tx`SELECT 1 FROM users WHERE id = ${userId} FOR UPDATE`;
        const [counted] = await tx<{ count: number }[]>`
          SELECT count(*)::int AS count FROM webhook_endpoints WHERE user_id = ${userId}`;
        if (counted!.count >= max) throw new WebhookEndpointsFullError();
        const [row] = await tx<WebhookEndpointRecord[]>`
          INSERT INTO webhook_endpoints ${tx({
            user_id: userId,
            url: endpoint.url,
            events: endpoint.events,
            enabled: endpoint.enabled,
            description: endpoint.description ?? null,
            secret: endpoint.secret,
          })}
          RETURNING ${endpointColumns(tx)}`;
        return row!;
      });
    },

    /** The account's endpoint `id`; undefined for another account's, as for none. */
    async findOwned(userId: string, id: string): Promise<WebhookEndpointRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<WebhookEndpointRecord[]>`
        SELECT ${endpointColumns(sql)} FROM webhook_endpoints WHERE id = ${id} AND user_id = ${userId}`;
      return row;
    },

    async listByUser(userId: string): Promise<WebhookEndpointRecord[]> {
      return sql<WebhookEndpointRecord[]>`
        SELECT ${endpointColumns(sql)} FROM webhook_endpoints WHERE user_id = ${userId} ORDER BY created_at, id`;
    },

    async update(userId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const columns = {
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.events !== undefined && { events: changes.events }),
        ...(changes.enabled !== undefined && { enabled: changes.enabled }),
        ...(changes.description !== undefined && { description: changes.description }),
        updated_at: new Date(),
      };
      const [row] = await sql<WebhookEndpointRecord[]>`
        UPDATE webhook_endpoints SET ${sql(columns)}
        WHERE id = ${id} AND user_id = ${userId}
        RETURNING ${endpointColumns(sql)}`;
      return row;
    },

    /** Replaces the secret; the one it replaces keeps signing until `overlapUntil`. */
    async rotateSecret(userId: string, id: string, secret: string, overlapUntil: Date): Promise<WebhookEndpointRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<WebhookEndpointRecord[]>`
        UPDATE webhook_endpoints
        SET previous_secret = secret, previous_secret_expires_at = ${overlapUntil}, secret = ${secret}, updated_at = now()
        WHERE id = ${id} AND user_id = ${userId}
        RETURNING ${endpointColumns(sql)}`;
      return row;
    },

    /** Deletes the endpoint and its delivery log; false when the account has no such endpoint. */
    async delete(userId: string, id: string): Promise<boolean> {
      if (!isUuid(id)) return false;
      const rows = await sql`DELETE FROM webhook_endpoints WHERE id = ${id} AND user_id = ${userId} RETURNING id`;
      return rows.length === 1;
    },

    /** The account's enabled endpoints subscribed to any of `events`. */
    async subscribers(userId: string, events: WebhookEventType[]): Promise<WebhookEndpointRecord[]> {
      return sql<WebhookEndpointRecord[]>`
        SELECT ${endpointColumns(sql)} FROM webhook_endpoints
        WHERE user_id = ${userId} AND enabled AND events && ${sql.array(events)}::text[]`;
    },

    /** Every account with an enabled endpoint that wants `click` events (the worker caches it). */
    async clickSubscribers(): Promise<string[]> {
      const rows = await sql<{ userId: string }[]>`
        SELECT DISTINCT user_id AS "userId" FROM webhook_endpoints WHERE enabled AND 'click' = ANY (events)`;
      return rows.map((row) => row.userId);
    },

    /**
     * One delivery of each event to each endpoint that wants it; an event already delivered to an
     * endpoint (its job ran again) keeps its delivery. Returns the ids of all of them.
     */
    async createDeliveries(rows: (WebhookDeliveryInput & { endpointId: string })[]): Promise<string[]> {
      if (rows.length === 0) return [];
      const inserted = await sql<{ id: string }[]>`
        INSERT INTO webhook_deliveries ${sql(
          rows.map((row) => ({ endpoint_id: row.endpointId, event: row.event, event_id: row.eventId, payload: row.payload })),
        )}
        ON CONFLICT (endpoint_id, event_id) WHERE resend_of IS NULL DO UPDATE SET event_id = excluded.event_id
        RETURNING id`;
      return inserted.map((row) => row.id);
    },

    /** A delivery with what sending it needs of its endpoint. */
    async findDelivery(id: string): Promise<{ delivery: WebhookDeliveryRecord; endpoint: WebhookEndpointRecord } | undefined> {
      if (!isUuid(id)) return undefined;
      const [delivery] = await sql<WebhookDeliveryRecord[]>`SELECT ${deliveryColumns(sql)} FROM webhook_deliveries WHERE id = ${id}`;
      if (!delivery) return undefined;
      const [endpoint] = await sql<WebhookEndpointRecord[]>`
        SELECT ${endpointColumns(sql)} FROM webhook_endpoints WHERE id = ${delivery.endpointId}`;
      return endpoint && { delivery, endpoint };
    },

    async recordAttempt(id: string, attempt: WebhookAttempt): Promise<void> {
      await sql`
        UPDATE webhook_deliveries
        SET status = ${attempt.status}, attempts = attempts + 1, response_status = ${attempt.responseStatus},
            response_body = ${attempt.responseBody}, error = ${attempt.error}, duration_ms = ${attempt.durationMs},
            last_attempt_at = now()
        WHERE id = ${id}`;
    },

    /** A page of the endpoint's deliveries, newest first, with their total. */
    async listDeliveries(endpointId: string, page: { offset: number; limit: number }) {
      const [counted] = await sql<{ total: number }[]>`
        SELECT count(*)::int AS total FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`;
      const total = counted!.total;
      const deliveries = await sql<WebhookDeliveryRecord[]>`
        SELECT ${deliveryColumns(sql)} FROM webhook_deliveries WHERE endpoint_id = ${endpointId}
        ORDER BY created_at DESC, id DESC OFFSET ${page.offset} LIMIT ${page.limit}`;
      return { deliveries, total };
    },

    async findEndpointDelivery(endpointId: string, id: string): Promise<WebhookDeliveryRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<WebhookDeliveryRecord[]>`
        SELECT ${deliveryColumns(sql)} FROM webhook_deliveries WHERE id = ${id} AND endpoint_id = ${endpointId}`;
      return row;
    },

    /** A new delivery of the same event and body to the same endpoint, with attempts of its own. */
    async resend(original: WebhookDeliveryRecord): Promise<WebhookDeliveryRecord> {
      const [row] = await sql<WebhookDeliveryRecord[]>`
        INSERT INTO webhook_deliveries ${sql({
          endpoint_id: original.endpointId,
          event: original.event,
          event_id: original.eventId,
          payload: original.payload,
          resend_of: original.id,
        })}
        RETURNING ${deliveryColumns(sql)}`;
      return row!;
    },

    /** Deletes deliveries made before `before`, and past the newest `perEndpoint` of each endpoint. */
    async pruneDeliveries(before: Date, perEndpoint: number): Promise<number> {
      const old = await sql`DELETE FROM webhook_deliveries WHERE created_at < ${before}`;
      const surplus = await sql`
        DELETE FROM webhook_deliveries d USING (
          SELECT id FROM (
            SELECT id, row_number() OVER (PARTITION BY endpoint_id ORDER BY created_at DESC, id DESC) AS place
            FROM webhook_deliveries
          ) ranked WHERE place > ${perEndpoint}
        ) surplus
        WHERE d.id = surplus.id`;
      return old.count + surplus.count;
    },
  };
}
export type WebhooksRepository = ReturnType<typeof webhooksRepository>;
