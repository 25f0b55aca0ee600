import { forbidden, notFound } from '@deeplink/core';
import type { LinkRecord, LinksRepository } from '@deeplink/core/db';
import type { Principal } from './auth-service.js';

/** The link with this id if the caller owns it: 404 when there is none, 403 when it is someone else's. */
export async function findOwnedLink(links: LinksRepository, principal: Principal, id: string): Promise<LinkRecord> {
  const link = await links.findById(id);
  if (!link) throw notFound('Link not found');
  if (link.userId !== principal.userId) throw forbidden('This link belongs to another account');
  return link;
}
