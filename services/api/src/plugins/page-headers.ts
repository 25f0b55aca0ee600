import type { FastifyReply } from 'fastify';

/**
 * The policy of every page the API serves (the dashboard, the API docs): their own scripts,
 * styles and images only (blob: and data: for the QR preview and downloads the dashboard makes
 * itself), calls to this origin only, no framing.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Sets the pages' strict headers: the CSP, no MIME sniffing, no Referer to other sites. */
export async function setPageHeaders(_request: unknown, reply: FastifyReply): Promise<void> {
  reply.header('content-security-policy', PAGE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
}
