import { Link } from '@/components/ui/link.tsx';

export default function Forbidden() {
  return (
    <main id="main" tabIndex={-1} className="flex min-h-screen outline-none items-center justify-center px-4">
      <div className="max-w-md text-center">
        <h1 className="text-lg font-semibold">Your role cannot open this page</h1>
        <p className="mt-2 text-sm text-zinc-600">Ask an admin for a role that includes it, or go back to the runs.</p>
        <Link href="/runs" className="mt-4 inline-block text-sm font-medium text-blue-700 underline">
          Back to runs
        </Link>
      </div>
    </main>
  );
}
