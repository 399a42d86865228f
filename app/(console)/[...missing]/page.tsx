import { notFound } from 'next/navigation';

// Any URL no page claims lands here, inside the console layout: the person gets the console's
// navigation with the not-found message instead of a bare 404 (the layout still requires a session).
export default function Missing() {
  notFound();
}
