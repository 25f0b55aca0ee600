import dns2 from 'dns2';

const { Packet } = dns2;

/**
 * A DNS server on a spare local UDP port answering TXT questions from `records` (name → strings;
 * change it while the server runs), and NXDOMAIN-like empty answers for anything else. The
 * services reach it through DNS_SERVERS.
 */
export async function startDnsServer(records: Map<string, string[]> = new Map()) {
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      for (const question of request.questions) {
        for (const text of records.get(question.name.toLowerCase()) ?? []) {
          if (question.type === Packet.TYPE.TXT)
            response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: text } as never);
        }
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return {
    records,
    /** The DNS_SERVERS value naming this server. */
    address: `127.0.0.1:${addresses.udp!.port}`,
    close: () => server.close(),
  };
}
export type DnsServer = Awaited<ReturnType<typeof startDnsServer>>;
