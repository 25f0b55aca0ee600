import { describe, expect, it } from 'vitest';
import { createUserAgentParser } from '../../services/worker/src/user-agent.js';
import { openGeoIp } from '../../services/worker/src/geoip.js';
import { seededRandom } from '../src/user-agents.js';
import { countryAddresses, YEAR_COUNTRIES, YEAR_REFERRERS, yearVisitors } from '../src/year-traffic.js';

// The bench's year of traffic, as the worker will see it: its own GeoIP database and agent parser.
describe('the year link traffic', () => {
  it('comes from 40 countries, 12 browsers on 6 systems and 50 referrers, correlated as real traffic', async () => {
    const pools = await countryAddresses();
    const geoip = await openGeoIp();
    for (const [code, addresses] of pools) {
      expect(addresses.length, code).toBeGreaterThan(10);
      for (const address of addresses) expect(geoip.country(address), address).toBe(code);
    }
    const visit = yearVisitors(pools);
    const parse = createUserAgentParser();
    const random = seededRandom(11);
    const seen = { countries: new Set<string>(), browsers: new Set<string>(), os: new Set<string>(), referrers: new Set<string>() };
    const byPlatform: Record<string, Record<string, number>> = {};
    let instagram = 0;
    let instagramFromInstagram = 0;
    for (let i = 0; i < 50_000; i++) {
      const { ip, userAgent, referrer } = visit(random);
      const agent = parse(userAgent);
      const country = geoip.country(ip);
      seen.countries.add(country);
      seen.browsers.add(agent.browser);
      seen.os.add(agent.os);
      if (referrer) seen.referrers.add(new URL(referrer).host);
      byPlatform[country] ??= {};
      byPlatform[country][agent.platform] = (byPlatform[country][agent.platform] ?? 0) + 1;
      // Agents go with their system: an iPhone's browsers run on iOS, Samsung Internet on Android.
      if (agent.platform === 'ios') expect(agent.os).toBe('iOS');
      if (agent.browser === 'Samsung Internet') expect(agent.os).toBe('Android');
      if (agent.browser === 'Instagram') {
        instagram++;
        if (referrer === 'https://l.instagram.com/') instagramFromInstagram++;
      }
    }
    expect(seen.countries.size).toBe(YEAR_COUNTRIES.length);
    expect(seen.browsers.size).toBe(12);
    expect(seen.os.size).toBe(6);
    expect(seen.referrers.size).toBe(YEAR_REFERRERS.length);
    // In-app browsers mostly come from their app; iPhones are commoner in the US than in India.
    expect(instagramFromInstagram / instagram).toBeGreaterThan(0.75);
    const iosShare = (code: string) => byPlatform[code]!.ios! / Object.values(byPlatform[code]!).reduce((a, b) => a + b, 0);
    expect(iosShare('US')).toBeGreaterThan(3 * iosShare('IN'));
  });
});
