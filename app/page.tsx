import { redirect } from 'next/navigation';
import { requireUser } from '@/lib/auth/page.ts';

// Where a person lands after signing in: support works from its queue, everyone else from the runs.
export default async function Home() {
  const user = await requireUser();
  redirect(user.role === 'support' ? '/support' : '/runs');
}
