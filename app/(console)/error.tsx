'use client';
// Shown when a console page fails to load (database down, bad link): what happened and what to do.
import { Link } from '@/components/ui/link.tsx';

export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div role="alert" className="mx-auto mt-16 max-w-lg rounded-lg border border-red-200 bg-white p-6 shadow-sm">
      <h1 className="text-lg font-semibold text-zinc-900">This page could not load</h1>
      <p className="mt-2 text-sm text-zinc-600">
        Nothing was changed. The server may have lost its database connection; try again in a moment. If it keeps
        failing, give an admin this reference
        {error.digest ? (
          <>
            {' '}
            : <code className="rounded bg-zinc-100 px-1">{error.digest}</code>
          </>
        ) : (
          ''
        )}{' '}
        so they can find it in the server log.
      </p>
      <div className="mt-4 flex gap-2">
        <button
          type="button"
          onClick={reset}
          className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-zinc-800"
        >
          Try again
        </button>
        <Link
          href="/runs"
          className="rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-50"
        >
          Back to runs
        </Link>
      </div>
    </div>
  );
}
