import { problems } from '@observatory/service';

/** The isError answer for a server the observatory does not track (check_anomaly, history). */
export function notTracked(serverUrl: string, what: string) {
  return problems.notFound(
    `${serverUrl} is not tracked by the observatory, so there is no ${what} for it. Call register_server to start tracking it, or check_trust to see what is known.`,
  );
}
