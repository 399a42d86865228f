import { NotFoundCard } from '@/components/not-found-card.tsx';

export default function NotFound() {
  return <NotFoundCard />;
}
