import { useParams } from 'react-router';
import { useCategories } from '@/features/mentors/api/mentors-api';
import { MentorPage } from '@/features/mentors/components/mentor-page';
import { RequestForm } from '@/features/requests/components/request-form';

/** /mentors/:id: the mentor's page with the request form beside it. */
export function MentorRoute() {
  const { id = '' } = useParams();
  const categories = useCategories();
  return <MentorPage id={id} categories={categories} action={(mentor) => <RequestForm mentor={mentor} />} />;
}
