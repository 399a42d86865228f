// Whether an error means the database could not be reached or went away mid-statement (restart,
// failover, network, an exhausted pool): worth retrying after a pause, unlike a constraint or a bug.
export function isConnectionLoss(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (
    typeof e?.code === 'string' &&
    (/^08/.test(e.code) ||
      ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(e.code))
  )
    return true;
  return /Connection terminated|connection (is )?closed|ECONNREFUSED|ECONNRESET|terminating connection|the database system is (starting up|shutting down)|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    e?.message ?? '',
  );
}
