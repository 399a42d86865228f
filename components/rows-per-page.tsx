// "Rows per page: 25 · 50 · 100" as plain links that keep the page's other parameters (and start
// again from the first page, since a cursor belongs to its page size only loosely).
import { Link } from '@/components/ui/link.tsx';
import { cn } from '@/components/ui/cn.ts';
import { PAGE_SIZES, pageSize, withParams, type SP } from '@/components/search-params.ts';

export function RowsPerPage({ path, sp }: { path: string; sp: SP }) {
  const current = pageSize(sp);
  return (
    <nav aria-label="Rows per page" className="flex items-center gap-2 text-xs text-zinc-600">
      Rows per page
      {PAGE_SIZES.map((n) => (
        <Link
          key={n}
          href={withParams(path, sp, { rows: n === PAGE_SIZES[0] ? undefined : String(n), cursor: undefined })}
          aria-current={n === current ? 'page' : undefined}
          // 24 px targets at least (WCAG 2.5.8), as the navigation's links.
          className={cn(
            'inline-flex min-h-6 min-w-6 items-center justify-center',
            n === current ? 'font-semibold text-zinc-900' : 'text-blue-700 underline',
          )}
        >
          {n}
        </Link>
      ))}
    </nav>
  );
}
