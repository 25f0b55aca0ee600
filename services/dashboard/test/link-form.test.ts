import type { Link } from '@deeplink/client';
import { describe, expect, it } from 'vitest';
import {
  createInput,
  fieldErrors,
  formValues,
  isPast,
  parseTags,
  updateInput,
  withScheme,
  withSchemes,
  type LinkFormValues,
} from '../src/lib/link-form.js';

const link: Link = {
  id: 'l1',
  url: 'http://127.0.0.1:8080/abc1234',
  title: 'Spring sale',
  defaultUrl: 'https://example.com/sale',
  desktopUrl: 'https://example.com/desktop',
  androidLink: { url: 'shop://sale', appPackageName: 'com.example.shop', minimumVersion: '2.1' },
  iosLink: { url: 'shop://sale', bundleId: 'com.example.shop', fallbackUrl: 'https://example.com/ios' },
  customParameters: { utm_source: 'mail', utm_campaign: 'spring' },
  expirationDate: '2030-06-01T10:30:00.000Z',
  tags: ['spring', 'email'],
  expiredUrl: 'https://example.com/over',
  socialPreview: { title: 'Spring sale', description: 'Half price' },
  passwordProtected: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

const edit = (change: (values: LinkFormValues) => void): LinkFormValues => {
  const values = structuredClone(formValues(link));
  change(values);
  return values;
};

describe('updateInput: only what changed, by the PUT merge rules', () => {
  it('sends nothing for an untouched form (the expiration survives the round trip through local time)', () => {
    expect(updateInput(link, formValues(link))).toEqual({});
  });

  it('sends a typed password, null when its removal is ticked, and never one the form did not get', () => {
    const guarded: Link = { ...link, passwordProtected: true, clickCap: 100, capOverflowUrl: 'https://example.com/full' };
    const editGuarded = (change: (values: LinkFormValues) => void) => {
      const values = structuredClone(formValues(guarded));
      change(values);
      return updateInput(guarded, values);
    };
    expect(formValues(guarded)).toMatchObject({
      password: '',
      removePassword: false,
      clickCap: '100',
      capOverflowUrl: 'https://example.com/full',
    });
    expect(updateInput(guarded, formValues(guarded))).toEqual({});
    expect(editGuarded((values) => (values.password = 'open sesame'))).toEqual({ password: 'open sesame' });
    expect(editGuarded((values) => (values.removePassword = true))).toEqual({ password: null });
    // Removal means nothing on a link without a password.
    expect(
      updateInput(
        link,
        edit((values) => (values.removePassword = true)),
      ),
    ).toEqual({});
    expect(
      editGuarded((values) => {
        values.clickCap = '250';
        values.capOverflowUrl = '';
      }),
    ).toEqual({ clickCap: 250, capOverflowUrl: null });
    expect(editGuarded((values) => (values.clickCap = ''))).toEqual({ clickCap: null });
  });

  it('sends a changed top-level field alone, and null for a cleared optional one', () => {
    expect(
      updateInput(
        link,
        edit((values) => {
          values.title = ' Summer sale ';
          values.desktopUrl = '';
          values.expirationDate = '';
          values.expiredUrl = '';
        }),
      ),
    ).toEqual({ title: 'Summer sale', desktopUrl: null, expirationDate: null, expiredUrl: null });
  });

  it('sends only the changed fields of a platform, null for a cleared optional one, and the required ones empty so the API names them', () => {
    expect(
      updateInput(
        link,
        edit((values) => {
          values.android.minimumVersion = '';
          values.android.fallbackUrl = 'https://example.com/android';
        }),
      ),
    ).toEqual({ androidLink: { minimumVersion: null, fallbackUrl: 'https://example.com/android' } });
    expect(
      updateInput(
        link,
        edit((values) => {
          values.ios.bundleId = '';
        }),
      ),
    ).toEqual({ iosLink: { bundleId: '' } });
  });

  it('sends the social preview like a platform: changed fields, null for a cleared description, null when emptied', () => {
    expect(
      updateInput(
        link,
        edit((values) => {
          values.preview.description = '';
          values.preview.imageUrl = 'https://example.com/card.png';
        }),
      ),
    ).toEqual({ socialPreview: { description: null, imageUrl: 'https://example.com/card.png' } });
    expect(
      updateInput(
        link,
        edit((values) => {
          values.preview = { title: '', description: '', imageUrl: '' };
        }),
      ),
    ).toEqual({ socialPreview: null });
  });

  it('removes a platform whose fields were all cleared, and sends a new platform whole', () => {
    const bare = { ...link, androidLink: undefined };
    expect(
      updateInput(
        link,
        edit((values) => {
          values.android = { url: '', appPackageName: '', minimumVersion: '', fallbackUrl: '' };
        }),
      ),
    ).toEqual({ androidLink: null });
    const values = formValues(bare);
    values.android = { url: 'shop://x', appPackageName: 'com.x', minimumVersion: '', fallbackUrl: '' };
    expect(updateInput(bare, values)).toEqual({ androidLink: { url: 'shop://x', appPackageName: 'com.x' } });
  });

  it('sends custom parameters by key: added or changed with their value, removed as null; all removed as null', () => {
    expect(
      updateInput(
        link,
        edit((values) => {
          values.parameters = [
            { key: 'utm_source', value: 'newsletter' },
            { key: 'ref', value: 'x' },
            { key: '', value: 'ignored' },
          ];
        }),
      ),
    ).toEqual({ customParameters: { utm_source: 'newsletter', ref: 'x', utm_campaign: null } });
    expect(
      updateInput(
        link,
        edit((values) => {
          values.parameters = [];
        }),
      ),
    ).toEqual({ customParameters: null });
  });

  it('replaces the tags when they change, null when none are left', () => {
    expect(
      updateInput(
        link,
        edit((values) => {
          values.tags = 'Spring, email, promo';
        }),
      ),
    ).toEqual({ tags: ['spring', 'email', 'promo'] });
    expect(
      updateInput(
        link,
        edit((values) => {
          values.tags = ' ';
        }),
      ),
    ).toEqual({ tags: null });
  });
});

describe('createInput', () => {
  it('leaves empty optional fields and untouched platforms out', () => {
    const values = formValues();
    values.title = 'Hello';
    values.defaultUrl = 'https://example.com';
    expect(createInput(values)).toEqual({ title: 'Hello', defaultUrl: 'https://example.com' });
  });

  it('sends every filled field, and a half-filled platform as it is', () => {
    const values = formValues(link);
    values.ios = { url: 'shop://sale', bundleId: '', minimumVersion: '', fallbackUrl: '' };
    const input = createInput(values);
    expect(input).toMatchObject({
      androidLink: link.androidLink,
      iosLink: { url: 'shop://sale' },
      customParameters: link.customParameters,
      tags: ['spring', 'email'],
      expiredUrl: link.expiredUrl,
      socialPreview: link.socialPreview,
    });
    expect(input.expirationDate).toBe(link.expirationDate);
  });

  it('sends a password, a click cap and its overflow address when given (https:// added)', () => {
    const values = formValues();
    values.title = 'Guarded';
    values.defaultUrl = 'https://example.com';
    values.password = 'open sesame';
    values.clickCap = '500';
    values.capOverflowUrl = 'example.com/sold-out';
    expect(createInput(withSchemes(values))).toEqual({
      title: 'Guarded',
      defaultUrl: 'https://example.com',
      password: 'open sesame',
      clickCap: 500,
      capOverflowUrl: 'https://example.com/sold-out',
    });
  });
});

describe('form helpers', () => {
  it('parses tags: lower case, commas or spaces, no repeats', () => {
    expect(parseTags('Spring, email  spring,,promo')).toEqual(['spring', 'email', 'promo']);
  });

  it("maps the API's field errors to the form's fields", () => {
    expect(
      fieldErrors([
        { field: 'androidLink.appPackageName', message: 'is required' },
        { field: 'customParameters.a b', message: 'bad key' },
        { field: 'tags.2', message: 'too long' },
        { field: 'title', message: 'is required' },
      ]),
    ).toEqual({ 'androidLink.appPackageName': 'is required', customParameters: 'bad key', tags: 'too long', title: 'is required' });
  });
});

describe('web addresses typed without a scheme', () => {
  it('get https:// in front, while app links, full URLs and empty fields stay as they are', () => {
    expect(withScheme('example.com/x')).toBe('https://example.com/x');
    expect(withScheme('  www.example.com ')).toBe('https://www.example.com');
    expect(withScheme('http://example.com')).toBe('http://example.com');
    expect(withScheme('shop://sale')).toBe('shop://sale');
    expect(withScheme('')).toBe('');
    const values = withSchemes({
      ...formValues(),
      defaultUrl: 'example.com/a',
      android: { ...formValues().android, url: 'shop://x', fallbackUrl: 'example.com/get' },
    });
    expect(values.defaultUrl).toBe('https://example.com/a');
    expect(values.android).toMatchObject({ url: 'shop://x', fallbackUrl: 'https://example.com/get' });
  });
});

describe('a new link’s place', () => {
  it('sends the back-half and the domain when given, nothing when left empty', () => {
    const base = { ...formValues(), title: 'T', defaultUrl: 'https://example.com' };
    expect(createInput(base)).toEqual({ title: 'T', defaultUrl: 'https://example.com' });
    expect(createInput({ ...base, slug: ' spring ', domain: 'go.example.com' })).toMatchObject({
      slug: 'spring',
      domain: 'go.example.com',
    });
  });

  it('tells an expiry in the past', () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(isPast('', now)).toBe(false);
    expect(isPast('2026-05-01T10:00', now)).toBe(true);
    expect(isPast('2027-05-01T10:00', now)).toBe(false);
  });
});
