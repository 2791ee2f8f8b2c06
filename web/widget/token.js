// Access tokens: one fresh ivat- value per measurement, never cached, and
// only ever the value, never the token's id, which opens nothing.

import { codes, PulseWireError } from './errors.js';

const prefix = 'ivat-';

/**
 * tokenValue extracts the credential from what a token source gave: the
 * value itself, or a token creation response relayed verbatim by the
 * company's endpoint ({id, value, permissions, expiresAt, ...}), from which
 * only `value` is taken. The id is a UUID that opens nothing, so a body
 * that has an id but no value is an error, not a fallback.
 */
export function tokenValue(given) {
  let value = given;
  if (given && typeof given === 'object') {
    value = given.value;
  }
  if (typeof value !== 'string' || !value.trim().startsWith(prefix)) {
    const has = given && typeof given === 'object' ? Object.keys(given).join(', ') || 'nothing' : typeof given;
    throw new PulseWireError(codes.tokenUnavailable, `the token source gave no ${prefix} value (it gave ${has})`);
  }
  return value.trim();
}

/**
 * TokenSource hands out one token per measurement, from the options of
 * mount: `token` (a value or response, good for one measurement, or a
 * function returning either) or `tokenUrl` (the company's endpoint,
 * fetched anew for every measurement with `tokenRequest` as fetch options).
 */
export class TokenSource {
  constructor({ token, tokenUrl, tokenRequest }) {
    if (token === undefined && !tokenUrl) {
      throw new TypeError('PulseWire.mount: give token or tokenUrl');
    }
    this.token = token;
    this.tokenUrl = tokenUrl;
    this.tokenRequest = tokenRequest || {};
    this.spent = false;
  }

  /** canRepeat says whether another measurement can get a token. */
  get canRepeat() {
    return typeof this.token === 'function' || !!this.tokenUrl || !this.spent;
  }

  /** next returns the ivat- value for the next measurement. */
  async next(signal) {
    if (this.token !== undefined && typeof this.token !== 'function') {
      if (this.spent) {
        throw new PulseWireError(codes.tokenUnavailable, 'a token opens one measurement: pass tokenUrl or a function to measure again');
      }
      this.spent = true;
      return tokenValue(this.token);
    }
    if (typeof this.token === 'function') {
      let given;
      try {
        given = await this.token({ signal });
      } catch (err) {
        throw new PulseWireError(codes.tokenUnavailable, `the token function failed: ${err && err.message}`, err);
      }
      return tokenValue(given);
    }
    return tokenValue(await this.fetch(signal));
  }

  async fetch(signal) {
    const init = {
      method: 'POST',
      credentials: 'same-origin',
      ...this.tokenRequest,
      headers: { Accept: 'application/json', ...(this.tokenRequest.headers || {}) },
      cache: 'no-store', // a token is never reused, so never cached
      signal,
    };
    let resp;
    try {
      resp = await fetch(this.tokenUrl, init);
    } catch (err) {
      if (signal && signal.aborted) throw err;
      throw new PulseWireError(codes.tokenUnavailable, `tokenUrl: ${err && err.message}`, err);
    }
    if (!resp.ok) {
      throw new PulseWireError(codes.tokenUnavailable, `tokenUrl answered ${resp.status}`);
    }
    const text = await resp.text();
    try {
      return JSON.parse(text);
    } catch {
      return text; // a bare value is accepted too
    }
  }
}
