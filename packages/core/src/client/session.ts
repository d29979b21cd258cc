/**
 * The signed-in session: its tokens, kept in the client's storage, and renewal with at most one
 * renewal in flight (concurrent requests that find the token about to expire share it). Clients
 * sharing the storage (browser tabs sharing localStorage) renew one at a time too, under a Web
 * Lock where there is one, and one that finds the session renewed by another takes it as it is:
 * the server rotates refresh tokens, and using an old one again would revoke the sign-in.
 */
import { getJson, setJson, type ClientStorage } from './storage.js';
import type { LoginState } from './types.js';

const ACTIVE_LOGIN = 'activeLogin';
const RENEW_LOCK = 'hearth-session-renewal';

interface LockManager {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

const STORAGE_SYNC_POLLS = 20;
const STORAGE_SYNC_POLL_MS = 100;

/** A browser page: its storage may be shared with other tabs. */
function isSharedStorageHost(): boolean {
  return typeof (globalThis as { window?: unknown }).window !== 'undefined';
}

/** Runs `fn` under the Web Lock shared by the page's origin (navigator.locks), or directly without one. */
function withRenewLock<T>(fn: () => Promise<T>): Promise<T> {
  const locks = (globalThis as { navigator?: { locks?: LockManager } }).navigator?.locks;
  return locks ? locks.request(RENEW_LOCK, fn) : fn();
}

export class Session {
  private current: LoginState | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly storage: ClientStorage,
    /** Renew this many ms before the access token expires. */
    private readonly gracePeriod: number,
    private readonly now: () => number = () => Date.now(),
    /** Called after every change of the session (sign-in, renewal, sign-out). */
    private readonly onChange: () => void = () => undefined,
  ) {
    this.current = getJson<LoginState>(storage, ACTIVE_LOGIN);
  }

  get state(): LoginState | undefined {
    return this.current;
  }

  get accessToken(): string | undefined {
    return this.current?.accessToken;
  }

  /** Replaces the session (undefined signs out) and stores it. */
  set(state: LoginState | undefined): void {
    this.current = state;
    setJson(this.storage, ACTIVE_LOGIN, state);
    this.onChange();
  }

  /**
   * True when the access token expires within the grace period (or has expired). For a token
   * that lives less than twice the grace period, the margin is half its lifetime, so that a
   * short-lived token is not renewed on every request.
   */
  isExpiring(state: LoginState | undefined = this.current): boolean {
    const { expiresAt, issuedAt } = state ?? {};
    if (expiresAt === undefined) {
      return false;
    }
    const margin = issuedAt !== undefined ? Math.min(this.gracePeriod, (expiresAt - issuedAt) / 2) : this.gracePeriod;
    return expiresAt - this.now() <= margin;
  }

  /** True when the access token has expired. */
  isExpired(): boolean {
    const expiresAt = this.current?.expiresAt;
    return expiresAt !== undefined && expiresAt <= this.now();
  }

  /** Takes the stored session when another client renewed it (another token, not about to expire). */
  private adoptStored(): boolean {
    const stored = getJson<LoginState>(this.storage, ACTIVE_LOGIN);
    if (stored?.accessToken && stored.accessToken !== this.current?.accessToken && !this.isExpiring(stored)) {
      this.current = stored;
      this.onChange();
      return true;
    }
    return false;
  }

  /** True while a renewal is in flight. */
  get isRenewing(): boolean {
    return this.renewing !== undefined;
  }

  /**
   * Renews the session with `renew`, unless a renewal is already in flight, in which case the
   * caller waits for that one. When the stored session has been renewed by another client
   * meanwhile (and is not about to expire), that one is taken instead. The new state is stored; a
   * failed renewal leaves the old state for the caller to decide about.
   */
  renew(renew: () => Promise<LoginState>): Promise<void> {
    if (!this.renewing) {
      // Started on a microtask, so that `renewing` is set before the renewal can settle.
      this.renewing = Promise.resolve()
        .then(() =>
          withRenewLock(async () => {
            if (this.adoptStored()) {
              return;
            }
            try {
              this.set(await renew());
            } catch (err) {
              // In a browser, another tab may have renewed with the same refresh token a moment ago
              // and its write to localStorage not be visible here yet (tabs' storage syncs
              // asynchronously): wait a little for it before giving up on the session.
              for (let i = 0; isSharedStorageHost() && i < STORAGE_SYNC_POLLS; i++) {
                await new Promise((resolve) => setTimeout(resolve, STORAGE_SYNC_POLL_MS));
                if (this.adoptStored()) {
                  return;
                }
              }
              throw err;
            }
          }),
        )
        .finally(() => {
          this.renewing = undefined;
        });
    }
    return this.renewing;
  }
}
