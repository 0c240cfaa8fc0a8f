/**
 * `text` with the user part of every URL replaced by `***` (`https://***@host/...`): a token
 * given in a URL is never printed. An ssh URL keeps a user name without a password (`ssh://git@host`
 * names the account to log in as; the secret is the key), as does `git@host:path`, which is no URL.
 */
export function redactUrls(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@'"`<>]+)@/gi, (whole, scheme: string, user: string) =>
    /ssh/i.test(scheme) && !user.includes(':') ? whole : `${scheme}***@`,
  );
}
