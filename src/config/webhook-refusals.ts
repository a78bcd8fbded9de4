// The refusals of a webhook setting, in one place: the configuration check and the dispatcher both
// refuse these, and each names the setting or the command that gets a user past it.

/** Why a plain-http webhook URL is refused, and the setting that allows it. */
export function plainHttpRefusal(allowPrivateSetting: string): string {
  return `must be https://; http:// is allowed only with ${allowPrivateSetting}=true, for a receiver on this machine or a private network`;
}

/** Why a webhook secret is refused, and how to make a good one. */
export const badSecretRefusal = "must be a Standard Webhooks secret, 'whsec_' followed by base64; make one with `refsync webhook-secret`";
