// ua-parser-js 1.x ships no type declarations; this covers the part the worker uses.
declare module 'ua-parser-js' {
  export interface UAResult {
    browser: { name?: string; version?: string };
    os: { name?: string; version?: string };
    device: { type?: string; vendor?: string; model?: string };
  }
  export class UAParser {
    constructor(userAgent?: string);
    setUA(userAgent: string): this;
    getResult(): UAResult;
  }
  export default UAParser;
}
