import { Link } from '@/components/ui/link.tsx';

/** The console's answer for a run, plan or page that does not exist or lies outside the viewer's
 *  scope (Z1: both read the same). */
export function NotFoundCard() {
  return (
    <div className="mx-auto mt-16 max-w-lg rounded-lg border border-zinc-200 bg-white p-6 text-center shadow-sm">
      <h1 className="text-lg font-semibold text-zinc-900">Not found</h1>
      <p className="mt-2 text-sm text-zinc-600">
        This run, plan or page does not exist. Check the link, or find the run by its event id on the runs page.
      </p>
      <Link href="/runs" className="mt-4 inline-block text-sm font-medium text-blue-700 underline">
        Go to runs
      </Link>
    </div>
  );
}
